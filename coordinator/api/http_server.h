// The coordinator's HTTP side (docs/dashboard.md), on its own port beside
// gRPC and served by cpp-httplib: the JSON API over the store under
// /api/v1/, the dashboard's files (built into the binary) at /, Prometheus
// metrics at /metrics and a health answer at /healthz. Plain HTTP, or HTTPS
// with the gRPC side's certificate (and client certificates with its client
// CA).
//
// Who may call what is gRPC's rule (auth.h), with the same credentials: the
// API's reads and /metrics need a role that may read, a triage needs gate
// or admin; /healthz and the dashboard's files are open. When
// authentication is off (no --token-file, no --require-credentials) every
// caller may do everything, as on gRPC.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/tls_files.h"
#include "coordinator/api/auth.h"
#include "coordinator/api/http_connections.h"  // and httplib's Server and Request, declared
#include "coordinator/store.h"

namespace perfgate::coordinator {

struct HttpConfig {
  std::string listen = "127.0.0.1:8080";  // host:port; port 0 picks a free one
  AuthConfig auth;                        // the gRPC side's (auth.h)
  // With cert and key: HTTPS only; with ca too, every client must present a
  // certificate that chains to it. Empty cert: plain HTTP.
  TlsPem tls;
  // The store the API's reads and /metrics use (a read-only database role,
  // --query-database); null: `store`. Triage and credentials use `store`.
  Store* read_store = nullptr;
  // Connections at once, in all and per client address, and the proxies
  // whose connections count only in all (http_admission.h).
  AdmissionLimits admission;
};

/// The check of a request before its route runs: the caller of the
/// "Authorization: Bearer <token>" header may do `action` (auth.h; the
/// header is compared in constant time). OK, UNAUTHENTICATED (a missing,
/// malformed, unknown or revoked token) or PERMISSION_DENIED (a role that
/// does not allow it), the message naming what is wrong.
absl::Status AuthorizeRequest(const Authenticator& auth, const httplib::Request& req, Action action);

/// A write must send a JSON body (so that a page of another origin cannot
/// post a plain form without a preflight): OK or INVALID_ARGUMENT.
absl::Status CheckJsonBody(const httplib::Request& req);

class HttpServer {
 public:
  /// Binds (UNAVAILABLE when the address cannot be bound, naming the port
  /// when it is in use; INVALID_ARGUMENT when it is not host:port or the TLS
  /// material is refused) and serves on threads of its own.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpConfig& config, Store& store);
  ~HttpServer();  // stops

  int port() const { return server_->port(); }
  /// "https" with TLS, else "http".
  const char* scheme() const { return tls_ ? "https" : "http"; }
  /// Stops accepting and waits for the connections' threads.
  void Stop();

 private:
  HttpServer(const HttpConfig& config, Store& store);
  std::unique_ptr<Authenticator> auth_;
  std::unique_ptr<GuardedHttpServer> server_;
  bool tls_ = false;
  std::string tls_error_;  // what OpenSSL refused of the TLS files
};

/// The stores the routes use: reads, and writes (triage).
struct ApiStores {
  Store& read;
  Store& write;
};

/// Registers the /api/v1/ routes (http_api.cc).
void RegisterApi(httplib::Server& server, ApiStores stores, const Authenticator& auth);
/// Registers the dashboard's files, /metrics and /healthz (http_static.cc).
void RegisterPages(httplib::Server& server, Store& read_store, const Authenticator& auth);

}  // namespace perfgate::coordinator
