// Connection limits under cpp-httplib (http_connections.h): a listening
// socket and accept loop of this file's, admission per client address, and
// a loop per connection whose reads and writes wait at most until a
// deadline, on a socket made non-blocking, over TLS or not; the parsing and
// routing stay cpp-httplib's (Server::process_request).
#include "coordinator/api/http_connections.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>
#include <variant>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "perfgate/v1/api.pb.h"
#include "wire/api_json.h"

namespace perfgate::coordinator {
namespace {

using Clock = std::chrono::steady_clock;

// One accepted socket, with TLS when `ssl` is set: reads and writes that
// give up at a deadline instead of blocking. Reads are buffered: the parser
// asks for one byte at a time.
class Connection {
 public:
  Connection(int sock, SSL* ssl) : sock_(sock), ssl_(ssl) { fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK); }

  // Waits until the socket is readable (or writable) or the deadline passes.
  bool Wait(short events, Clock::time_point deadline) const {
    if ((events & POLLIN) && (begin_ < end_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0))) return true;
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();  // 0 only once it has passed
      if (left <= 0) return false;
      pollfd p{sock_, events, 0};
      const int n = poll(&p, 1, static_cast<int>(left));
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) return false;
    }
  }

  ssize_t Read(char* buf, size_t size, Clock::time_point deadline) {
    if (begin_ == end_) {
      const ssize_t n = Fill(deadline);
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(buf, buffer_.data() + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t Fill(Clock::time_point deadline) {
    char* buf = buffer_.data();
    const size_t size = buffer_.size();
    for (;;) {
      if (!Wait(POLLIN, deadline)) return -1;
      if (ssl_ == nullptr) {
        const ssize_t n = recv(sock_, buf, size, 0);
        if (n >= 0 || (errno != EAGAIN && errno != EINTR)) return n;
        continue;
      }
      const int n = SSL_read(ssl_, buf, static_cast<int>(size));
      if (n > 0) return n;
      const int e = SSL_get_error(ssl_, n);
      if (e == SSL_ERROR_ZERO_RETURN) return 0;
      if (e == SSL_ERROR_WANT_WRITE && !Wait(POLLOUT, deadline)) return -1;
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return -1;
    }
  }

  ssize_t Write(const char* buf, size_t size, Clock::time_point deadline) {
    for (;;) {
      if (!Wait(POLLOUT, deadline)) return -1;
      if (ssl_ == nullptr) {
        const ssize_t n = send(sock_, buf, size, MSG_NOSIGNAL);
        if (n >= 0 || (errno != EAGAIN && errno != EINTR)) return n;
        continue;
      }
      const int n = SSL_write(ssl_, buf, static_cast<int>(size));
      if (n > 0) return n;
      const int e = SSL_get_error(ssl_, n);
      if (e == SSL_ERROR_WANT_READ && !Wait(POLLIN, deadline)) return -1;
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) return -1;
    }
  }

  int sock() const { return sock_; }

 private:
  int sock_;
  SSL* ssl_;
  std::array<char, 4096> buffer_{};
  size_t begin_ = 0, end_ = 0;
};

void Address(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  const int r = peer ? getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len)
                     : getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len);
  if (r != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
    port = ntohs(a->sin6_port);
  }
  ip = text;
}

// What cpp-httplib parses a request from and writes its answer to: reads
// end at the request's deadline, each write at the write limit.
class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(Connection& c, std::chrono::milliseconds write) : c_(c), write_(write) {}
  void StartRequest(std::chrono::milliseconds read) { read_deadline_ = Clock::now() + read; }
  // True once a read gave up at the request's deadline: the connection is
  // then closed, not read on for another request.
  bool expired() const { return expired_; }

  bool is_readable() const override { return c_.Wait(POLLIN, read_deadline_); }
  bool is_writable() const override { return c_.Wait(POLLOUT, Clock::now() + write_); }
  ssize_t read(char* ptr, size_t size) override {
    const ssize_t n = c_.Read(ptr, size, read_deadline_);
    if (n < 0 && Clock::now() >= read_deadline_) expired_ = true;
    return n;
  }
  ssize_t write(const char* ptr, size_t size) override {
    const auto deadline = Clock::now() + write_;
    size_t done = 0;
    while (done < size) {
      const ssize_t n = c_.Write(ptr + done, size - done, deadline);
      if (n <= 0) return -1;
      done += static_cast<size_t>(n);
    }
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { Address(c_.sock(), true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { Address(c_.sock(), false, ip, port); }
  socket_t socket() const override { return c_.sock(); }

 private:
  Connection& c_;
  std::chrono::milliseconds write_;
  Clock::time_point read_deadline_ = Clock::now();
  bool expired_ = false;
};

// The TLS handshake, bounded by the idle limit; null when it fails.
SSL* AcceptTls(SSL_CTX* ctx, Connection& plain, int sock, std::chrono::milliseconds limit) {
  SSL* ssl = SSL_new(ctx);
  if (ssl == nullptr) return nullptr;
  SSL_set_fd(ssl, sock);
  const auto deadline = Clock::now() + limit;
  for (;;) {
    const int r = SSL_accept(ssl);
    if (r == 1) return ssl;
    const int e = SSL_get_error(ssl, r);
    if ((e == SSL_ERROR_WANT_READ && plain.Wait(POLLIN, deadline)) ||
        (e == SSL_ERROR_WANT_WRITE && plain.Wait(POLLOUT, deadline))) {
      continue;
    }
    SSL_free(ssl);
    return nullptr;
  }
}

// After the answer to a request whose body is left unread: the client may
// still be sending it, and closing with unread data resets the connection,
// which can discard the answer before the client reads it. A little is
// read and dropped first, for at most a second.
void Drain(Connection& c) {
  shutdown(c.sock(), SHUT_WR);
  const auto deadline = Clock::now() + std::chrono::seconds(1);
  char buf[4096];
  size_t total = 0;
  while (total < (256u << 10)) {
    const ssize_t n = c.Read(buf, sizeof buf, deadline);
    if (n <= 0) break;
    total += static_cast<size_t>(n);
  }
}

// A connection past the admission limits, on plain HTTP: one short answer,
// written without waiting (it fits any fresh socket's send buffer).
void AnswerBusy(int sock, const std::string& why) {
  const std::string body = why + "\n";
  const std::string answer = absl::StrCat(
      "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\n"
      "Retry-After: 1\r\nContent-Length: ",
      body.size(), "\r\n\r\n", body);
  send(sock, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  shutdown(sock, SHUT_WR);
}

// The answer to a request whose body is refused, before routing.
httplib::Server::HandlerResponse AnswerRefusal(const httplib::Request& req, httplib::Response& res,
                                               size_t max_body) {
  const std::optional<BodyRefusal> refusal = RefuseBody(req, max_body);
  if (!refusal) return httplib::Server::HandlerResponse::Unhandled;
  res.status = refusal->status;
  res.set_header("Connection", "close");
  v1::ErrorResponse error;
  error.set_error(refusal->message);
  res.set_content(wire::ToApiJson(error), "application/json; charset=utf-8");
  return httplib::Server::HandlerResponse::Handled;
}

// Content-Length = 1*DIGIT (RFC 9112 §6.2); nullopt for anything else.
std::optional<uint64_t> Digits(absl::string_view s) {
  s = absl::StripAsciiWhitespace(s);
  uint64_t n = 0;
  if (s.empty() || s.size() > 19 || !std::all_of(s.begin(), s.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(s, &n)) {
    return std::nullopt;
  }
  return n;
}

// The one length every Content-Length header and list element gives, or
// why there is none.
std::variant<uint64_t, std::string> OneContentLength(const httplib::Request& req) {
  std::optional<uint64_t> length;
  const size_t headers = req.get_header_value_count("Content-Length");
  for (size_t i = 0; i < headers; ++i) {
    for (absl::string_view part : absl::StrSplit(req.get_header_value("Content-Length", i), ',')) {
      const std::optional<uint64_t> n = Digits(part);
      if (!n) return std::string("Content-Length: is not a number");
      if (length && *length != *n) {
        return absl::StrCat("Content-Length: differing values (", *length, " and ", *n,
                            "); send one length");
      }
      length = n;
    }
  }
  return *length;
}

}  // namespace

// cpp-httplib's server with its request parser and router made callable:
// process_request is protected, for subclasses, and nothing else of the
// library's connection handling is used.
class Router : public httplib::Server {
 public:
  using httplib::Server::process_request;
};

GuardedHttpServer::GuardedHttpServer(const ConnectionLimits& limits,
                                     const std::function<bool(SSL_CTX&)>& setup_tls)
    : limits_(limits), router_(std::make_unique<Router>()), admission_(limits.admission) {
  router_->set_payload_max_length(limits.max_body);
  const size_t max_body = limits.max_body;
  router_->set_pre_routing_handler([max_body](const httplib::Request& req, httplib::Response& res) {
    return AnswerRefusal(req, res, max_body);
  });
  if (setup_tls) {
    tls_ = SSL_CTX_new(TLS_server_method());
    if (tls_ != nullptr) {
      SSL_CTX_set_options(tls_, SSL_OP_NO_COMPRESSION | SSL_OP_NO_SESSION_RESUMPTION_ON_RENEGOTIATION);
    }
    valid_ = tls_ != nullptr && setup_tls(*tls_);
  }
}

GuardedHttpServer::~GuardedHttpServer() {
  Stop();
  if (tls_ != nullptr) SSL_CTX_free(tls_);
}

httplib::Server& GuardedHttpServer::routes() { return *router_; }

bool GuardedHttpServer::valid() const { return valid_; }

absl::Status GuardedHttpServer::Start(const HostPort& where) {
  auto fd = ListenTcp(where);
  if (!fd.ok()) return fd.status();
  if (pipe2(wake_, O_CLOEXEC) != 0) {
    close(*fd);
    return absl::InternalError(absl::StrCat("cannot make a pipe: ", std::strerror(errno)));
  }
  listen_fd_ = *fd;
  port_ = BoundPort(listen_fd_);
  acceptor_ = std::thread([this] { AcceptLoop(); });
  return absl::OkStatus();
}

void GuardedHttpServer::AcceptLoop() {
  for (;;) {
    pollfd p[2] = {{listen_fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (poll(p, 2, -1) < 0 && errno != EINTR) return;
    if (p[1].revents != 0) return;
    if ((p[0].revents & POLLIN) == 0) continue;
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int sock = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
    if (sock < 0) {
      // Out of descriptors: the listening socket stays readable, so wait a
      // little (or for Stop) instead of spinning.
      if (errno == EMFILE || errno == ENFILE) poll(&p[1], 1, 100);
      continue;
    }
    const std::string client = ClientAddress(peer);
    if (const std::optional<std::string> busy = admission_.Enter(client)) {
      if (tls_ == nullptr) AnswerBusy(sock, *busy);
      close(sock);
      continue;
    }
    // Headers and body go out in separate writes; with Nagle's algorithm
    // each answer would wait for the client's delayed ACK.
    const int one = 1;
    setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    {
      std::lock_guard<std::mutex> lock(mu_);
      open_.insert(sock);
      ++running_;
    }
    try {
      std::thread([this, sock, client] {
        Serve(sock);
        Finish(sock, client);
      }).detach();
    } catch (const std::system_error&) {
      Finish(sock, client);
    }
  }
}

void GuardedHttpServer::Finish(int sock, const std::string& client) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    open_.erase(sock);
  }
  shutdown(sock, SHUT_RDWR);
  close(sock);
  admission_.Leave(client);
  // The last thing this connection's thread does with the server: Stop may
  // destroy it as soon as the count reaches zero.
  std::lock_guard<std::mutex> lock(mu_);
  --running_;
  idle_.notify_all();
}

void GuardedHttpServer::Serve(int sock) {
  Connection plain(sock, nullptr);
  SSL* ssl = nullptr;
  if (tls_ != nullptr) {
    ssl = AcceptTls(tls_, plain, sock, limits_.idle);
    if (ssl == nullptr) return;
  }
  Connection c(sock, ssl);
  DeadlineStream stream(c, limits_.write);
  bool ok = true;
  for (int served = 0; ok && served < limits_.max_requests_per_connection; ++served) {
    if (!c.Wait(POLLIN, Clock::now() + limits_.idle)) break;
    stream.StartRequest(limits_.request_read);
    bool closed = false, refused = false;
    ok = router_->process_request(stream, served + 1 == limits_.max_requests_per_connection, closed,
                                  [&](httplib::Request& req) {
                                    req.ssl = ssl;
                                    refused = RefuseBody(req, limits_.max_body).has_value();
                                  });
    // An unread body must not be taken for the next request.
    if (refused) {
      Drain(c);
      ok = false;
    }
    if (closed || refused || stream.expired()) break;
  }
  if (ssl != nullptr) {
    if (ok) SSL_shutdown(ssl);
    SSL_free(ssl);
  }
}

void GuardedHttpServer::Stop() {
  if (!acceptor_.joinable()) return;
  const char wake = 'x';
  while (write(wake_[1], &wake, 1) < 0 && errno == EINTR) {
  }
  acceptor_.join();
  close(listen_fd_);
  close(wake_[0]);
  close(wake_[1]);
  std::unique_lock<std::mutex> lock(mu_);
  // Waiting clients are cut off; each thread then returns its place.
  for (int sock : open_) shutdown(sock, SHUT_RDWR);
  idle_.wait(lock, [this] { return running_ == 0; });
}

std::optional<BodyRefusal> RefuseBody(const httplib::Request& req, size_t max_body) {
  const bool takes_body = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" ||
                          req.method == "DELETE";
  const bool has_length = req.has_header("Content-Length");
  if (req.has_header("Transfer-Encoding")) {
    // Which of the two frames the body is what a proxy and this server could
    // disagree on (request smuggling): refused, not guessed.
    if (has_length) return BodyRefusal{400, "Content-Length and Transfer-Encoding together: send one"};
    return BodyRefusal{411, "Transfer-Encoding: not accepted; send the body with Content-Length"};
  }
  if (!has_length) {
    if (!takes_body) return std::nullopt;
    return BodyRefusal{411, absl::StrCat(req.method, " needs Content-Length")};
  }
  const std::variant<uint64_t, std::string> one = OneContentLength(req);
  if (const auto* why = std::get_if<std::string>(&one)) return BodyRefusal{400, *why};
  const uint64_t length = std::get<uint64_t>(one);
  if (length > 0 && !takes_body) return BodyRefusal{413, absl::StrCat(req.method, " takes no body")};
  if (length > max_body) {
    return BodyRefusal{413, absl::StrCat("body of ", length, " bytes; at most ", max_body)};
  }
  return std::nullopt;
}

}  // namespace perfgate::coordinator
