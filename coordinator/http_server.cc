#include "coordinator/http_server.h"

#include <httplib.h>

#include <openssl/ssl.h>

#include <chrono>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/tls_context.h"

namespace perfgate::coordinator {
namespace {

// Largest request body accepted (a triage note is at most 4000 bytes).
constexpr size_t kMaxBody = 64 * 1024;

// Sent with every answer, errors of the HTTP parser included: no guessing
// of types, no scripts, styles or frames from elsewhere, no embedding of
// the dashboard in another site's frame, no run URL leaked as a referrer.
// uPlot sizes its canvas through element styles, hence 'unsafe-inline'
// for styles only.
httplib::Headers SecurityHeaders() {
  return {
      {"X-Content-Type-Options", "nosniff"},
      {"Content-Security-Policy",
       "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
      {"X-Frame-Options", "DENY"},
      {"Referrer-Policy", "no-referrer"},
  };
}

}  // namespace

absl::Status AuthorizeRequest(const Authenticator& auth, const httplib::Request& req, Action action) {
  std::optional<std::string> authorization;
  if (req.has_header("Authorization")) authorization = req.get_header_value("Authorization");
  return auth.AuthorizeHttp(authorization, req.remote_addr, action).status();
}

absl::Status CheckJsonBody(const httplib::Request& req) {
  if (!absl::StartsWith(req.get_header_value("Content-Type"), "application/json")) {
    return absl::InvalidArgumentError("Content-Type: a write sends application/json");
  }
  return absl::OkStatus();
}

HttpServer::HttpServer(const HttpConfig& config, Store& store)
    : auth_(std::make_unique<Authenticator>(config.auth, store)), tls_(!config.tls.cert.empty()) {
  ConnectionLimits limits;
  limits.max_body = kMaxBody;
  if (!tls_) {
    server_ = MakeGuardedServer(limits, nullptr);
    return;
  }
  // The gRPC side's certificate and key; with its client CA, a client
  // certificate is required in the handshake.
  const TlsPem pem = config.tls;
  // Called once, in the constructor; what OpenSSL refused is kept for Start.
  server_ = MakeGuardedServer(limits, [this, &pem](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    absl::Status s = UseCertificateChain(&ctx, pem.cert, pem.key);
    if (s.ok() && !pem.ca.empty()) {
      s = TrustOnly(&ctx, pem.ca);
      SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    }
    tls_error_ = std::string(s.message());
    return s.ok();
  });
}

HttpServer::~HttpServer() { Stop(); }

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpConfig& config, Store& store) {
  const size_t colon = config.listen.rfind(':');
  int port = -1;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(config.listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http-listen: '", config.listen, "' is not host:port (e.g. 127.0.0.1:8080)"));
  }
  std::string host = config.listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::unique_ptr<HttpServer> s(new HttpServer(config, store));
  if (!s->server_->is_valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-cert/--tls-key/--tls-client-ca: refused for HTTPS: ", s->tls_error_));
  }
  s->server_->set_default_headers(SecurityHeaders());
  // Headers and body go out in separate writes; with Nagle's algorithm each
  // answer would wait for the client's delayed ACK (tens of milliseconds).
  s->server_->set_tcp_nodelay(true);
  Store& reads = config.read_store != nullptr ? *config.read_store : store;
  RegisterApi(*s->server_, ApiStores{reads, store}, *s->auth_);
  RegisterPages(*s->server_, reads, *s->auth_);
  if (port == 0) {
    s->port_ = s->server_->bind_to_any_port(host);
  } else if (s->server_->bind_to_port(host, port)) {
    s->port_ = port;
  }
  if (s->port_ <= 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen for HTTP on ", config.listen,
                                               " (address in use or not local?)"));
  }
  httplib::Server* server = s->server_.get();
  s->thread_ = std::thread([server] { server->listen_after_bind(); });
  // Serving before returning, so that a Stop() right away finds it running.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!server->is_running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return s;
}

void HttpServer::Stop() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace perfgate::coordinator
