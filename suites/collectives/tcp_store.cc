#include "suites/collectives/tcp_store.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "absl/strings/str_cat.h"

namespace perfgate::suites::collectives {
namespace {

// Requests: one byte of kind, a u32 key length and the key; a set adds a u32
// value length and the value. A set is answered with one byte, a get with a
// u32 length and the value once the key exists.
constexpr char kSet = 'S';
constexpr char kGet = 'G';

bool WriteAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = ::recv(fd, c, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteBytes(int fd, const std::string& s) {
  const uint32_t n = static_cast<uint32_t>(s.size());
  return WriteAll(fd, &n, sizeof n) && WriteAll(fd, s.data(), s.size());
}

bool ReadBytes(int fd, std::string* s) {
  uint32_t n = 0;
  if (!ReadAll(fd, &n, sizeof n)) return false;
  s->resize(n);
  return ReadAll(fd, s->data(), n);
}

addrinfo* Resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res) != 0) {
    return nullptr;
  }
  return res;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TcpStoreServer>> TcpStoreServer::Start(const std::string& host,
                                                                      int port) {
  addrinfo* res = Resolve(host, port, true);
  if (res == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("rendezvous: cannot resolve '", host, "'"));
  }
  int fd = -1;
  std::string error = "no address";
  for (addrinfo* a = res; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      error = std::strerror(errno);
      ::close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd < 0) {
    return absl::UnavailableError(
        absl::StrCat("rendezvous: cannot listen on ", host, ":", port, ": ", error));
  }
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const int bound = ntohs(addr.ss_family == AF_INET6
                              ? reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port
                              : reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  std::unique_ptr<TcpStoreServer> server(new TcpStoreServer(fd, bound));
  server->acceptor_ = std::thread([s = server.get()] { s->Accept(); });
  return server;
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    for (int fd : clients_) ::shutdown(fd, SHUT_RDWR);
  }
  changed_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  for (std::thread& t : threads_) t.join();
  for (int fd : clients_) ::close(fd);
}

void TcpStoreServer::Accept() {
  while (true) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    clients_.push_back(fd);
    threads_.emplace_back([this, fd] { Serve(fd); });
  }
}

void TcpStoreServer::Serve(int fd) {
  while (true) {
    char kind = 0;
    std::string key;
    if (!ReadAll(fd, &kind, 1) || !ReadBytes(fd, &key)) break;
    if (kind == kSet) {
      std::string value;
      if (!ReadBytes(fd, &value)) break;
      {
        std::lock_guard<std::mutex> lock(mu_);
        data_[key] = std::vector<char>(value.begin(), value.end());
      }
      changed_.notify_all();
      const char ok = 1;
      if (!WriteAll(fd, &ok, 1)) break;
    } else if (kind == kGet) {
      std::string value;
      {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait(lock, [&] { return stopping_ || data_.count(key) > 0; });
        if (stopping_) break;
        const std::vector<char>& v = data_[key];
        value.assign(v.begin(), v.end());
      }
      if (!WriteBytes(fd, value)) break;
    } else {
      break;
    }
  }
  // The descriptor is closed by the destructor, once no thread can use it.
  ::shutdown(fd, SHUT_RDWR);
}

TcpStore::TcpStore(const std::string& host, int port, std::chrono::milliseconds timeout)
    : timeout_(timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string error;
  while (fd_ < 0) {
    addrinfo* res = Resolve(host, port, false);
    for (addrinfo* a = res; a != nullptr && fd_ < 0; a = a->ai_next) {
      const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
        fd_ = fd;
      } else {
        error = std::strerror(errno);
        ::close(fd);
      }
    }
    if (res != nullptr) freeaddrinfo(res);
    if (fd_ >= 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error(absl::StrCat("rendezvous: no store at ", host, ":", port,
                                            " within the timeout (", error,
                                            "); is rank 0 running?"));
    }
    // Rank 0 may still be starting: poll at a modest rate until the deadline.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

TcpStore::~TcpStore() {
  if (fd_ >= 0) ::close(fd_);
}

void TcpStore::set(const std::string& key, const std::vector<char>& data) {
  std::lock_guard<std::mutex> lock(mu_);
  char ok = 0;
  if (!WriteAll(fd_, &kSet, 1) || !WriteBytes(fd_, key) ||
      !WriteBytes(fd_, std::string(data.begin(), data.end())) || !ReadAll(fd_, &ok, 1)) {
    throw std::runtime_error(absl::StrCat("rendezvous: lost the store while setting ", key));
  }
}

std::vector<char> TcpStore::Get(const std::string& key, std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(mu_);
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string value;
  if (!WriteAll(fd_, &kGet, 1) || !WriteBytes(fd_, key) || !ReadBytes(fd_, &value)) {
    throw std::runtime_error(absl::StrCat("rendezvous: key '", key,
                                          "' did not appear in the store in time (a rank "
                                          "missing, or a different --world-size?)"));
  }
  return std::vector<char>(value.begin(), value.end());
}

std::vector<char> TcpStore::get(const std::string& key) { return Get(key, timeout_); }

void TcpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  for (const std::string& k : keys) Get(k, timeout);
}

}  // namespace perfgate::suites::collectives
