// The dashboard's embedded files, /metrics and /healthz.
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "coordinator/dashboard_assets.h"
#include "coordinator/dashboard_queries.h"
#include "coordinator/http_server.h"
#include "coordinator/metrics.h"

namespace perfgate::coordinator {

void RegisterPages(httplib::Server& server, Store& store) {
  for (const DashboardAsset& asset : DashboardAssets()) {
    const DashboardAsset* a = &asset;
    auto serve = [a](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-cache");
      res.set_content(reinterpret_cast<const char*>(a->data), a->size, a->content_type);
    };
    server.Get(a->path, serve);
    if (std::string(a->path) == "/index.html") server.Get("/", serve);
  }
  Store* s = &store;
  server.Get("/healthz", [s](const httplib::Request&, httplib::Response& res) {
    auto version = s->SchemaVersion();
    if (!version.ok()) {
      res.status = 503;
      res.set_content(absl::StrCat("database unavailable: ", version.status().message(), "\n"),
                      "text/plain");
      return;
    }
    res.set_content("ok\n", "text/plain");
  });
  server.Get("/metrics", [s](const httplib::Request&, httplib::Response& res) {
    auto open = CountOpenRuns(*s);
    if (!open.ok()) DefaultMetrics().StoreError("http metrics");
    res.set_content(DefaultMetrics().Render(open.ok() ? std::optional<int64_t>(*open) : std::nullopt),
                    "text/plain; version=0.0.4");
  });
}

}  // namespace perfgate::coordinator
