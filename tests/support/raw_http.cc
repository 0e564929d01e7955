#include "tests/support/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace perfgate::testing {
namespace {

using Clock = std::chrono::steady_clock;

// Waits for the socket to be readable until `deadline`; false at the deadline.
bool Readable(int fd, Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  pollfd p{fd, POLLIN, 0};
  return left.count() > 0 && poll(&p, 1, static_cast<int>(left.count())) > 0;
}

}  // namespace

RawConnection::RawConnection(int port, const std::string& from) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
  sockaddr_in source{};
  source.sin_family = AF_INET;
  if (inet_pton(AF_INET, from.c_str(), &source.sin_addr) != 1 ||
      bind(fd_, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0) {
    return;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
}

RawConnection::~RawConnection() { close(fd_); }

bool RawConnection::Send(const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = send(fd_, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string RawConnection::Receive(std::chrono::milliseconds timeout) {
  std::string out;
  const auto deadline = Clock::now() + timeout;
  while (out.find("\r\n\r\n") == std::string::npos && Readable(fd_, deadline)) {
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

std::string RawConnection::ReceiveUntilClosed(std::chrono::milliseconds timeout, bool* closed) {
  std::string out;
  *closed = false;
  const auto deadline = Clock::now() + timeout;
  while (Readable(fd_, deadline)) {
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      *closed = true;
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

bool RawConnection::ClosedWithin(std::chrono::milliseconds timeout) {
  bool closed = false;
  ReceiveUntilClosed(timeout, &closed);
  return closed;
}

bool RawConnection::Quiet() const {
  pollfd p{fd_, POLLIN, 0};
  return poll(&p, 1, 0) == 0;
}

void RawConnection::FinishSending() { shutdown(fd_, SHUT_WR); }

}  // namespace perfgate::testing
