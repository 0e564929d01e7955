// The coordinator's HTTP side (docs/dashboard.md), on its own port beside
// gRPC and served by cpp-httplib: the JSON API over the store under
// /api/v1/, the dashboard's files (built into the binary) at /, Prometheus
// metrics at /metrics and a health answer at /healthz. Reading needs no
// credential; writing (triage) needs the coordinator's bearer token.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/store.h"

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace perfgate::coordinator {

struct HttpConfig {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free one
  std::string token;                      // bearer token writes need; empty = no check
};

/// The one check of a write request: "Authorization: Bearer <token>" equal
/// to the configured token (compared in constant time), and a JSON body (so
/// that a page of another origin cannot post a plain form). OK, or
/// UNAUTHENTICATED / INVALID_ARGUMENT saying what is missing.
absl::Status CheckWriteAccess(const httplib::Request& req, const std::string& token);

class HttpServer {
 public:
  /// Binds (UNAVAILABLE when the address cannot be bound, INVALID_ARGUMENT
  /// when it is not host:port) and serves on a thread of its own.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpConfig& config, Store& store);
  ~HttpServer();  // stops

  int port() const { return port_; }
  /// Stops accepting and waits for the serving thread.
  void Stop();

 private:
  HttpServer();
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

/// Registers the /api/v1/ routes (http_api.cc).
void RegisterApi(httplib::Server& server, Store& store, const std::string& token);
/// Registers the dashboard's files, /metrics and /healthz (http_static.cc).
void RegisterPages(httplib::Server& server, Store& store);

}  // namespace perfgate::coordinator
