// The HTTP side's connections, under cpp-httplib's parser and routes: how
// many may be open, how long a request may take to arrive, how long an idle
// connection is kept, and which request bodies are refused before they are
// read (docs/limits-and-faults.md). cpp-httplib 0.11 bounds none of these by
// itself: a slow client holds one of its eight threads for as long as it
// trickles header lines, a chunked body or a body on a GET is read whole.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace httplib {
class Server;
struct Request;
}  // namespace httplib

namespace perfgate::coordinator {

struct ConnectionLimits {
  // Connections served at once; one more is answered 503 and closed.
  int max_connections = 64;
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
/// Transfer-Encoding (chunked bodies have no size up front), a Content-Length
/// that is not a number or above `max_body`, a body on a method that takes
/// none (GET, HEAD, OPTIONS), a POST/PUT/PATCH/DELETE without Content-Length.
struct BodyRefusal {
  int status;
  std::string message;
};
std::optional<BodyRefusal> RefuseBody(const httplib::Request& req, size_t max_body);

/// A cpp-httplib server whose connections obey `limits` and whose requests
/// with a refused body are answered (JSON {"error": ...}) and closed before
/// authentication or routing. With `setup_tls` it serves HTTPS, the callback
/// preparing the OpenSSL context as httplib::SSLServer's does.
std::unique_ptr<httplib::Server> MakeGuardedServer(const ConnectionLimits& limits,
                                                   std::function<bool(SSL_CTX&)> setup_tls);

}  // namespace perfgate::coordinator
