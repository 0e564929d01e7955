#include "coordinator/api/http_server.h"

#include <httplib.h>

#include <openssl/ssl.h>

#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/tls_context.h"
#include "coordinator/api/listen_port.h"

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
  limits.admission = config.admission;
  if (!tls_) {
    server_ = std::make_unique<GuardedHttpServer>(limits, nullptr);
    return;
  }
  // The gRPC side's certificate and key; with its client CA, a client
  // certificate is required in the handshake.
  const TlsPem pem = config.tls;
  // Called once, in the constructor; what OpenSSL refused is kept for Start.
  server_ = std::make_unique<GuardedHttpServer>(limits, [this, &pem](SSL_CTX& ctx) {
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
  auto where = ParseHostPort(config.listen, "--http-listen");
  if (!where.ok()) return where.status();
  std::unique_ptr<HttpServer> s(new HttpServer(config, store));
  if (!s->server_->valid()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-cert/--tls-key/--tls-client-ca: refused for HTTPS: ", s->tls_error_));
  }
  httplib::Server& routes = s->server_->routes();
  routes.set_default_headers(SecurityHeaders());
  Store& reads = config.read_store != nullptr ? *config.read_store : store;
  RegisterApi(routes, ApiStores{reads, store}, *s->auth_);
  RegisterPages(routes, reads, *s->auth_);
  if (absl::Status started = s->server_->Start(*where); !started.ok()) {
    return absl::Status(started.code(), absl::StrCat("HTTP (--http-listen): ", started.message()));
  }
  return s;
}

void HttpServer::Stop() {
  if (server_) server_->Stop();
}

}  // namespace perfgate::coordinator
