#include "coordinator/server.h"

#include <chrono>

#include "absl/strings/str_cat.h"

namespace perfgate::coordinator {

Server::Server(Store& store, const ServerConfig& config)
    : auth_(config.token), ingest_(store, auth_, config.on_run_closed), gate_(store), query_(store) {}

Server::~Server() { Shutdown(); }

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerConfig& config, Store& store) {
  std::unique_ptr<Server> s(new Server(store, config));
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(config.listen, grpc::InsecureServerCredentials(), &s->port_);
  builder.RegisterService(&s->ingest_);
  builder.RegisterService(&s->gate_);
  builder.RegisterService(&s->query_);
  // Batches of raw samples can be large.
  builder.SetMaxReceiveMessageSize(64 << 20);
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", config.listen,
                                               " (address in use or not local?)"));
  }
  return s;
}

void Server::Wait() {
  if (server_) server_->Wait();
}

void Server::Shutdown() {
  if (server_) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  }
}

}  // namespace perfgate::coordinator
