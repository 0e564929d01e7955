#include "coordinator/api/http_admission.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace perfgate::coordinator {

std::string ClientAddress(const sockaddr_storage& peer) {
  char text[INET6_ADDRSTRLEN] = {};
  if (peer.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
    return text;
  }
  if (peer.ss_family != AF_INET6) return "";
  in6_addr a = reinterpret_cast<const sockaddr_in6*>(&peer)->sin6_addr;
  if (IN6_IS_ADDR_V4MAPPED(&a)) {
    in_addr v4{};
    std::memcpy(&v4, a.s6_addr + 12, sizeof v4);
    inet_ntop(AF_INET, &v4, text, sizeof text);
    return text;
  }
  // One host usually has a whole /64 to pick addresses from.
  std::memset(a.s6_addr + 8, 0, 8);
  inet_ntop(AF_INET6, &a, text, sizeof text);
  return absl::StrCat(text, "/64");
}

namespace {

// A configured proxy address as ClientAddress writes it ("" when it is not
// a numeric IPv4 or IPv6 address, which config checking refuses first).
std::string Normalized(const std::string& ip) {
  sockaddr_storage s{};
  if (inet_pton(AF_INET, ip.c_str(), &reinterpret_cast<sockaddr_in*>(&s)->sin_addr) == 1) {
    s.ss_family = AF_INET;
  } else if (inet_pton(AF_INET6, ip.c_str(), &reinterpret_cast<sockaddr_in6*>(&s)->sin6_addr) == 1) {
    s.ss_family = AF_INET6;
  }
  return ClientAddress(s);
}

std::set<std::string> NormalizedAll(const std::vector<std::string>& ips) {
  std::set<std::string> out;
  for (const std::string& ip : ips) {
    if (std::string n = Normalized(ip); !n.empty()) out.insert(std::move(n));
  }
  return out;
}

}  // namespace

bool IsNumericAddress(const std::string& ip) { return !Normalized(ip).empty(); }

Admission::Admission(AdmissionLimits limits)
    : limits_(std::move(limits)), trusted_(NormalizedAll(limits_.trusted_proxies)) {}

std::optional<std::string> Admission::Enter(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  if (total_ >= limits_.max_connections) {
    return absl::StrCat("too many connections (", limits_.max_connections, " in all); try again later");
  }
  const bool trusted = trusted_.count(client) > 0;
  int& mine = per_client_[client];
  if (!trusted && mine >= limits_.max_per_address) {
    return absl::StrCat("too many connections from ", client, " (", limits_.max_per_address,
                        " per address); close some or try again later");
  }
  ++mine;
  ++total_;
  return std::nullopt;
}

void Admission::Leave(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  --total_;
  auto it = per_client_.find(client);
  if (it != per_client_.end() && --it->second <= 0) per_client_.erase(it);
}

}  // namespace perfgate::coordinator
