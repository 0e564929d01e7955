#include "coordinator/api/listen_port.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace perfgate::coordinator {
namespace {

// Binds a new socket to `where` and listens; the socket, or -errno.
int BindAndListen(const HostPort& where) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(where.port);
  if (getaddrinfo(where.host.empty() ? nullptr : where.host.c_str(), port.c_str(), &hints, &found) != 0) {
    return -EADDRNOTAVAIL;
  }
  int result = -EADDRNOTAVAIL;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      result = -errno;
      continue;
    }
    // SO_REUSEADDR lets a restarted coordinator bind while old connections
    // linger in TIME_WAIT; on Linux it never lets two sockets listen on one
    // port. SO_REUSEPORT, which would, is left off.
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
      freeaddrinfo(found);
      return fd;
    }
    result = -errno;
    close(fd);
  }
  freeaddrinfo(found);
  return result;
}

absl::Status Refusal(const HostPort& where, int error) {
  if (error == EADDRINUSE) {
    return absl::UnavailableError(absl::StrCat("port ", where.port, " on ", where.host,
                                               " is already in use (another coordinator?); stop it or choose "
                                               "another port"));
  }
  return absl::UnavailableError(
      absl::StrCat("cannot listen on ", where.host, ":", where.port, ": ", std::strerror(error)));
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(const std::string& listen, const std::string& option) {
  const size_t colon = listen.rfind(':');
  HostPort out;
  if (colon == std::string::npos || colon == 0 || !absl::SimpleAtoi(listen.substr(colon + 1), &out.port) ||
      out.port < 0 || out.port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(option, ": '", listen, "' is not host:port (e.g. 127.0.0.1:8080)"));
  }
  out.host = listen.substr(0, colon);
  if (out.host.size() > 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  return out;
}

absl::StatusOr<int> ListenTcp(const HostPort& where) {
  const int fd = BindAndListen(where);
  if (fd < 0) return Refusal(where, -fd);
  return fd;
}

absl::Status WhyCannotListen(const HostPort& where) {
  const int fd = BindAndListen(where);
  if (fd < 0) return Refusal(where, -fd);
  close(fd);
  return absl::OkStatus();
}

int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

}  // namespace perfgate::coordinator
