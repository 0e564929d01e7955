#include "coordinator/api/server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "coordinator/api/listen_port.h"

namespace perfgate::coordinator {

Server::Server(Store& store, const ServerConfig& config)
    : auth_(config.auth, store), ingest_(store, auth_, config.on_run_closed), gate_(store, auth_),
      query_(config.query_store != nullptr ? *config.query_store : store, auth_) {}

Server::~Server() { Shutdown(); }

namespace {

// With TLS and authentication on, a call without a valid token is refused
// from its metadata (TokenMetadataProcessor), before its message is read.
std::shared_ptr<grpc::ServerCredentials> Credentials(const TlsPem& tls, const Authenticator& auth) {
  if (tls.cert.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options(
      tls.ca.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                     : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = tls.ca;
  options.pem_key_cert_pairs.push_back({tls.key, tls.cert});
  auto credentials = grpc::SslServerCredentials(options);
  if (auth.enabled()) credentials->SetAuthMetadataProcessor(std::make_shared<TokenMetadataProcessor>(auth));
  return credentials;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Server>> Server::Start(const ServerConfig& config, Store& store) {
  std::unique_ptr<Server> s(new Server(store, config));
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  // gRPC sets SO_REUSEPORT by default: a second coordinator on this port
  // would then start without a word and take half of the connections.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.AddListeningPort(config.listen, Credentials(config.tls, s->auth_), &s->port_);
  builder.RegisterService(&s->ingest_);
  builder.RegisterService(&s->gate_);
  builder.RegisterService(&s->query_);
  // Batches of raw samples can be large.
  builder.SetMaxReceiveMessageSize(64 << 20);
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) {
    // gRPC logs why but returns no reason; trying the bind again finds it.
    auto where = ParseHostPort(config.listen, "--listen");
    if (!where.ok()) return where.status();
    absl::Status why = WhyCannotListen(*where);
    if (why.ok()) why = absl::UnavailableError(absl::StrCat("cannot listen on ", config.listen));
    return why;
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
