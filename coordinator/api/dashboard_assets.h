// The dashboard's files, embedded in the binary at build time
// (dashboard/embed.cmake writes dashboard_assets.cc from the files under
// dashboard/ and uPlot's dist files from npm).
#pragma once

#include <cstddef>
#include <span>

namespace perfgate::coordinator {

struct DashboardAsset {
  const char* path;          // URL path, e.g. "/app.js"
  const char* content_type;
  const unsigned char* data;
  size_t size;
};

std::span<const DashboardAsset> DashboardAssets();

}  // namespace perfgate::coordinator
