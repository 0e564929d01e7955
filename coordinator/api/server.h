// The coordinator's gRPC server: Ingest, Gate, Query and grpc.health.v1 on
// one port, over a Store, in plaintext or TLS (mutual TLS with a client CA).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/tls_files.h"
#include "coordinator/api/auth.h"
#include "coordinator/api/service.h"
#include "coordinator/store.h"

namespace perfgate::coordinator {

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";  // port 0 picks a free one
  AuthConfig auth;                         // who may call what (auth.h)
  // TLS: with cert and key, the port speaks TLS only; with ca too, every
  // client must present a certificate that chains to it (mutual TLS).
  // Empty cert: plaintext.
  TlsPem tls;
  // The store Query reads from (a read-only database role, docs/security.md);
  // null: the one the server writes to.
  Store* query_store = nullptr;
  RunClosedHook on_run_closed;             // after each CloseRun that committed
};

class Server {
 public:
  /// Binds and starts serving. UNAVAILABLE when the address cannot be bound,
  /// naming the port when another process holds it (SO_REUSEPORT is off).
  static absl::StatusOr<std::unique_ptr<Server>> Start(const ServerConfig& config, Store& store);
  ~Server();

  /// The bound port (the chosen one when asked for port 0).
  int port() const { return port_; }
  /// Blocks until Shutdown().
  void Wait();
  /// Stops accepting calls and lets running ones finish (5 s at most).
  void Shutdown();

 private:
  Server(Store& store, const ServerConfig& config);
  Authenticator auth_;
  IngestService ingest_;
  GateService gate_;
  QueryService query_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace perfgate::coordinator
