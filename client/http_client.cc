#include "client/http_client.h"

#include <httplib.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <pthread.h>
#include <signal.h>

#include <cmath>
#include <ctime>
#include <memory>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/tls_context.h"
#include "wire/api_json.h"

namespace perfgate::client {
namespace {

absl::StatusCode FromHttp(int status) {
  switch (status) {
    case 400: return absl::StatusCode::kInvalidArgument;
    case 401: return absl::StatusCode::kUnauthenticated;
    case 403: return absl::StatusCode::kPermissionDenied;
    case 404: return absl::StatusCode::kNotFound;
    case 409: return absl::StatusCode::kFailedPrecondition;
    case 503: return absl::StatusCode::kUnavailable;
    default: return absl::StatusCode::kInternal;
  }
}

// Verification by OpenSSL in the handshake: the chain against the CA (the
// system's roots without one) and the name (--tls-server-name, else the
// host of the address; an IP address as such).
absl::Status SetUpTls(httplib::SSLClient& c, const ClientTls& tls, const std::string& host) {
  c.enable_server_certificate_verification(false);  // cpp-httplib's own check; OpenSSL's below
  SSL_CTX* ctx = c.ssl_context();
  if (ctx == nullptr) return absl::InternalError("cannot make a TLS context: " + LastTlsError());
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  if (!tls.ca_pem.empty()) {
    PERFGATE_RETURN_IF_ERROR(TrustOnly(ctx, tls.ca_pem));
  } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
    return absl::InternalError("cannot load the system's CA certificates: " + LastTlsError());
  }
  if (!tls.cert_pem.empty()) {
    PERFGATE_RETURN_IF_ERROR(UseCertificateChain(ctx, tls.cert_pem, tls.key_pem));
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
  const std::string name = tls.server_name.empty() ? host : tls.server_name;
  X509_VERIFY_PARAM* param = SSL_CTX_get0_param(ctx);
  if (X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str()) != 1) {
    ERR_clear_error();  // not an IP address: a DNS name
    if (X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size()) != 1) {
      return absl::InvalidArgumentError("--tls-server-name: '" + name + "' is not a host name");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<httplib::ClientImpl>> Connect(const HttpClientOptions& o) {
  const size_t colon = o.address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(o.address.substr(colon + 1), &port) || port <= 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--http: '", o.address, "' is not host:port"));
  }
  std::string host = o.address.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  std::unique_ptr<httplib::ClientImpl> c;
  if (o.tls.enabled) {
    auto ssl = std::make_unique<httplib::SSLClient>(host, port);
    PERFGATE_RETURN_IF_ERROR(SetUpTls(*ssl, o.tls, host));
    c = std::move(ssl);
  } else {
    c = std::make_unique<httplib::ClientImpl>(host, port);
  }
  const auto seconds = static_cast<time_t>(o.timeout_s);
  const auto micros = static_cast<time_t>((o.timeout_s - std::floor(o.timeout_s)) * 1e6);
  c->set_connection_timeout(seconds, micros);
  c->set_read_timeout(seconds, micros);
  c->set_write_timeout(seconds, micros);
  if (!o.token.empty()) c->set_bearer_token_auth(o.token.c_str());
  return c;
}

// A TLS write to a peer that has closed (a server refusing this client's
// certificate after a TLS 1.3 handshake) raises SIGPIPE, which would kill
// the process; here it is an error of the call. Blocked on this thread for
// the call, and a SIGPIPE it raised is taken before unblocking.
class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~NoSigpipe() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{0, 0};
      sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t pipe_, old_;
  bool was_pending_ = false;
};

// The text of a 200 answer; an unreachable API or the error it answered otherwise.
absl::StatusOr<std::string> AnswerText(const HttpClientOptions& o, const httplib::Result& res) {
  if (!res) {
    const std::string tls_error = LastTlsError();
    if (res.error() == httplib::Error::SSLConnection || !tls_error.empty()) {
      return absl::UnavailableError(absl::StrCat(
          "TLS handshake with the coordinator's HTTP API at ", o.address, " failed: ",
          tls_error.empty() ? httplib::to_string(res.error()) : tls_error,
          " (does it serve HTTPS, with a certificate of --tls-ca for this host?)"));
    }
    return absl::UnavailableError(absl::StrCat("cannot reach the coordinator's HTTP API at ", o.address, ": ",
                                               httplib::to_string(res.error()),
                                               o.tls.enabled ? "" : " (is it started with --http-listen? over HTTPS, "
                                                                    "give --tls-ca)"));
  }
  if (res->status != 200) {
    const nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
    const std::string message = body.is_object() && body.contains("error") && body["error"].is_string()
                                    ? body["error"].get<std::string>()
                                    : res->body;
    return absl::Status(FromHttp(res->status), message);
  }
  return res->body;
}

absl::StatusOr<nlohmann::json> Answer(const HttpClientOptions& o, const httplib::Result& res) {
  PERFGATE_ASSIGN_OR_RETURN(const std::string text, AnswerText(o, res));
  nlohmann::json body = nlohmann::json::parse(text, nullptr, false);
  if (body.is_discarded()) return absl::InternalError("the coordinator answered something that is not JSON");
  return body;
}

absl::Status AnswerMessage(const HttpClientOptions& o, const httplib::Result& res, google::protobuf::Message* answer) {
  PERFGATE_ASSIGN_OR_RETURN(const std::string text, AnswerText(o, res));
  if (absl::Status s = wire::FromApiJson(text, answer, answer->GetDescriptor()->name()); !s.ok()) {
    return absl::InternalError(absl::StrCat("the coordinator's answer is not what this perfgate reads: ", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<nlohmann::json> HttpGet(const HttpClientOptions& options, const std::string& path) {
  auto c = Connect(options);
  PERFGATE_RETURN_IF_ERROR(c);
  NoSigpipe quiet;
  return Answer(options, (*c)->Get(path.c_str()));
}

absl::StatusOr<nlohmann::json> HttpPost(const HttpClientOptions& options, const std::string& path,
                                        const nlohmann::json& body) {
  auto c = Connect(options);
  PERFGATE_RETURN_IF_ERROR(c);
  NoSigpipe quiet;
  return Answer(options, (*c)->Post(path.c_str(), body.dump(), "application/json"));
}

absl::Status HttpGetMessage(const HttpClientOptions& options, const std::string& path,
                            google::protobuf::Message* answer) {
  auto c = Connect(options);
  PERFGATE_RETURN_IF_ERROR(c);
  NoSigpipe quiet;
  return AnswerMessage(options, (*c)->Get(path.c_str()), answer);
}

absl::Status HttpPostMessage(const HttpClientOptions& options, const std::string& path,
                             const google::protobuf::Message& body, google::protobuf::Message* answer) {
  auto c = Connect(options);
  PERFGATE_RETURN_IF_ERROR(c);
  NoSigpipe quiet;
  return AnswerMessage(options, (*c)->Post(path.c_str(), wire::ToApiJson(body), "application/json"), answer);
}

std::string UrlEncode(const std::string& value) { return httplib::detail::encode_query_param(value); }

}  // namespace perfgate::client
