#include "coordinator/http_server.h"

#include <httplib.h>

#include <chrono>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace perfgate::coordinator {
namespace {

// Largest request body accepted (a triage note is at most 4000 bytes).
constexpr size_t kMaxBody = 64 * 1024;

}  // namespace

absl::Status CheckWriteAccess(const httplib::Request& req, const std::string& token) {
  if (!absl::StartsWith(req.get_header_value("Content-Type"), "application/json")) {
    return absl::InvalidArgumentError("Content-Type: a write sends application/json");
  }
  if (token.empty()) return absl::OkStatus();
  const std::string value = req.get_header_value("Authorization");
  if (value.empty()) {
    return absl::UnauthenticatedError(
        "missing 'Authorization: Bearer <token>'; writes need the coordinator's token");
  }
  const std::string expected = "Bearer " + token;
  // Constant time, so the answer's latency says nothing of the token.
  unsigned char diff = value.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < value.size() && i < expected.size(); ++i) {
    diff |= static_cast<unsigned char>(value[i] ^ expected[i]);
  }
  if (diff != 0) return absl::UnauthenticatedError("the token does not match the coordinator's");
  return absl::OkStatus();
}

HttpServer::HttpServer() : server_(std::make_unique<httplib::Server>()) {}

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
  std::unique_ptr<HttpServer> s(new HttpServer());
  s->server_->set_payload_max_length(kMaxBody);
  // Headers and body go out in separate writes; with Nagle's algorithm each
  // answer would wait for the client's delayed ACK (tens of milliseconds).
  s->server_->set_tcp_nodelay(true);
  // A page's dozen files and API calls reuse the browser's connections.
  s->server_->set_keep_alive_max_count(100);
  s->server_->set_read_timeout(10, 0);
  s->server_->set_write_timeout(10, 0);
  RegisterApi(*s->server_, store, config.token);
  RegisterPages(*s->server_, store);
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
