// The HTTP side's connections, under cpp-httplib's parser and routes: who
// may connect and how many at once (http_admission.h), how long a request
// may take to arrive, how long an idle connection is kept, and which
// request bodies are refused before they are read
// (docs/limits-and-faults.md). cpp-httplib 0.11 bounds none of these by
// itself: a slow client holds one of its eight threads for as long as it
// trickles header lines, a chunked body or a body on a GET is read whole.
//
// The listening socket, the accept loop and each connection's reads and
// writes are this file's; cpp-httplib only parses and routes each request,
// through Server::process_request, a protected member meant for subclasses
// (no private member of the library is overridden).
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "coordinator/api/http_admission.h"
#include "coordinator/api/listen_port.h"

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace perfgate::coordinator {

struct ConnectionLimits {
  // Connections served at once, in all and per client address; one more is
  // answered 503 and closed.
  AdmissionLimits admission;
  // From the first byte of a request to the end of its body (line, headers
  // and body); a client that has not sent it all by then is disconnected.
  std::chrono::milliseconds request_read{std::chrono::seconds(10)};
  // How long a connection may wait, idle, for its first or next request.
  std::chrono::milliseconds idle{std::chrono::seconds(5)};
  // How long one write of an answer may wait for the client to read.
  std::chrono::milliseconds write{std::chrono::seconds(10)};
  // Largest request body, declared by Content-Length.
  size_t max_body = 64 * 1024;
  // Requests served on one connection before it is closed.
  int max_requests_per_connection = 100;
};

/// Why a request's body is refused before any of it is read: an HTTP status
/// (400, 411, 413) and a sentence; nullopt when it may be read. Refused: a
/// Transfer-Encoding (chunked bodies have no size up front; with a
/// Content-Length too, 400: RFC 9112 §6.3), a Content-Length that is not
/// digits, that is given more than once or as a list with differing values
/// (400: which one frames the body is ambiguous), or above `max_body`; a
/// body on a method that takes none (GET, HEAD, OPTIONS); a
/// POST/PUT/PATCH/DELETE without Content-Length.
struct BodyRefusal {
  int status;
  std::string message;
};
std::optional<BodyRefusal> RefuseBody(const httplib::Request& req, size_t max_body);

class Router;

/// An HTTP(S) server whose connections obey `limits` and whose requests with
/// a refused body are answered (JSON {"error": ...}) and closed before
/// authentication or routing.
class GuardedHttpServer {
 public:
  /// With `setup_tls` it serves HTTPS, the callback preparing the OpenSSL
  /// context (certificate, key, client verification).
  GuardedHttpServer(const ConnectionLimits& limits, const std::function<bool(SSL_CTX&)>& setup_tls);
  ~GuardedHttpServer();  // stops

  /// Where routes, default headers and handlers are registered.
  httplib::Server& routes();
  /// False when setup_tls refused the TLS context.
  bool valid() const;
  /// Binds `where` (UNAVAILABLE naming the port when it is in use) and
  /// serves on a thread of its own until Stop.
  absl::Status Start(const HostPort& where);
  /// The bound port (the chosen one for port 0).
  int port() const { return port_; }
  /// Stops accepting, closes the open connections and waits for them.
  void Stop();

 private:
  void AcceptLoop();
  void Serve(int sock);
  void Finish(int sock, const std::string& client);

  const ConnectionLimits limits_;
  std::unique_ptr<Router> router_;
  SSL_CTX* tls_ = nullptr;
  bool valid_ = true;
  Admission admission_;
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  int port_ = 0;
  std::thread acceptor_;
  std::mutex mu_;
  std::condition_variable idle_;
  std::set<int> open_;  // sockets being served
  int running_ = 0;     // their threads, until each has returned its place
};

}  // namespace perfgate::coordinator
