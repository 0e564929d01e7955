// Which connections the HTTP side takes: at most so many from one client
// address and so many in all, so that one client (idle sockets reopened as
// soon as they are closed, slow senders) cannot take every place and shut
// the dashboard and /healthz to everyone else (docs/limits-and-faults.md).
#pragma once

#include <sys/socket.h>

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace perfgate::coordinator {

struct AdmissionLimits {
  // Connections served at once, from every address together.
  int max_connections = 256;
  // Connections served at once from one client address (an IPv6 client is
  // counted by its /64, the block one host is usually given).
  int max_per_address = 16;
  // Addresses of reverse proxies in front: their connections count only
  // toward max_connections (the proxy must bound each of its clients).
  std::vector<std::string> trusted_proxies;
};

/// The address a connection from `peer` is counted under: the IPv4 address
/// (an IPv4-mapped IPv6 one too), or an IPv6 address's /64 as "a:b:c:d::/64".
std::string ClientAddress(const sockaddr_storage& peer);

/// True when `ip` is a numeric IPv4 or IPv6 address (a trusted proxy's).
bool IsNumericAddress(const std::string& ip);

/// Counts the connections being served, in all and per client address.
class Admission {
 public:
  explicit Admission(AdmissionLimits limits);

  /// Takes a place for a connection from `client` (ClientAddress): nullopt
  /// when it may be served, else why not, as a sentence for a 503. Every
  /// admitted connection is given back with Leave.
  std::optional<std::string> Enter(const std::string& client);
  /// Gives back the place Enter took for `client`.
  void Leave(const std::string& client);

 private:
  const AdmissionLimits limits_;
  const std::set<std::string> trusted_;
  std::mutex mu_;
  int total_ = 0;
  std::map<std::string, int> per_client_;
};

}  // namespace perfgate::coordinator
