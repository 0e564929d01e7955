// The dashboard's embedded files and /healthz, open to anyone (the files
// hold no data; the page's API calls carry the credential), and /metrics,
// which needs a role that may read when callers must authenticate.
#include <httplib.h>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "coordinator/api/dashboard_assets.h"
#include "coordinator/api/http_server.h"
#include "coordinator/domain/metrics.h"

namespace perfgate::coordinator {
namespace {

// FNV-1a, 64 bits: the files' ETag.
uint64_t Fnv1a(const unsigned char* data, size_t size) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 1099511628211ull;
  return h;
}

}  // namespace

void RegisterPages(httplib::Server& server, Store& read_store, const Authenticator& auth) {
  for (const DashboardAsset& asset : DashboardAssets()) {
    const DashboardAsset* a = &asset;
    // The browser revalidates each file and gets 304 while the binary is the
    // same, so a file is sent (and compressed) once per browser, not per load.
    const std::string etag = absl::StrCat("\"", absl::Hex(Fnv1a(a->data, a->size)), "\"");
    auto serve = [a, etag](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Cache-Control", "no-cache");
      res.set_header("ETag", etag);
      if (req.get_header_value("If-None-Match") == etag) {
        res.status = 304;
        return;
      }
      res.set_content(reinterpret_cast<const char*>(a->data), a->size, a->content_type);
    };
    server.Get(a->path, serve);
    if (std::string(a->path) == "/index.html") server.Get("/", serve);
  }
  Store* s = &read_store;
  const Authenticator* a = &auth;
  server.Get("/healthz", [s](const httplib::Request&, httplib::Response& res) {
    auto version = s->SchemaVersion();
    if (!version.ok()) {
      // Open to anyone: the database's own words (host names, roles, tables)
      // go to the log only.
      std::cerr << "perfgate-coordinator: /healthz: database unavailable: " << version.status().message()
                << std::endl;
      res.status = 503;
      res.set_content("database unavailable (see the coordinator log)\n", "text/plain");
      return;
    }
    res.set_content("ok\n", "text/plain");
  });
  // Prometheus sends its bearer token (authorization.credentials_file): a
  // credential with role read when callers must authenticate.
  server.Get("/metrics", [s, a](const httplib::Request& req, httplib::Response& res) {
    if (auto denied = AuthorizeRequest(*a, req, Action::kRead); !denied.ok()) {
      res.status = absl::IsUnauthenticated(denied) ? 401 : 403;
      if (res.status == 401) res.set_header("WWW-Authenticate", "Bearer");
      res.set_content(absl::StrCat(denied.message(), "\n"), "text/plain");
      return;
    }
    auto open = s->CountOpenRuns();
    if (!open.ok()) DefaultMetrics().StoreError("http metrics");
    auto lag = s->StandbyLag();  // reads served by a standby: how far behind they are
    if (!lag.ok()) DefaultMetrics().StoreError("http metrics");
    res.set_content(DefaultMetrics().Render(open.ok() ? std::optional<int64_t>(*open) : std::nullopt,
                                            lag.ok() && *lag ? std::optional<double>((*lag)->seconds) : std::nullopt),
                    "text/plain; version=0.0.4");
  });
}

}  // namespace perfgate::coordinator
