// RFC 3986's grammar for the absolute http(s) URIs of webhook endpoints,
// and the address rules of their deliveries.
#include "coordinator/domain/webhook_url.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace perfgate::coordinator {
namespace {

constexpr size_t kMaxUrl = 2048;

bool IsUnreserved(char c) { return absl::ascii_isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~'; }
bool IsSubDelim(char c) { return std::strchr("!$&'()*+,;=", c) != nullptr && c != '\0'; }
bool IsPchar(char c) { return IsUnreserved(c) || IsSubDelim(c) || c == ':' || c == '@'; }

absl::Status Bad(absl::string_view what) { return absl::InvalidArgumentError(what); }

// The first character no part of a URL may hold; positions count from 1.
absl::Status CheckCharacters(absl::string_view url) {
  for (size_t i = 0; i < url.size(); ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    if (c == ' ') return Bad(absl::StrCat("a space at character ", i + 1, "; percent-encode it as %20"));
    if (c < 0x20 || c == 0x7f) {
      return Bad(absl::StrFormat("a control character (0x%02x) at character %d", c, i + 1));
    }
    if (c >= 0x80) {
      return Bad(absl::StrFormat("a non-ASCII byte (0x%02x) at character %d; percent-encode it", c, i + 1));
    }
  }
  return absl::OkStatus();
}

// A path (pchar and '/'), or a query or fragment (also '?'), that starts
// at `offset` of the URL.
absl::Status CheckComponent(absl::string_view text, size_t offset, absl::string_view part, bool query_like) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size() || !absl::ascii_isxdigit(text[i + 1]) || !absl::ascii_isxdigit(text[i + 2])) {
        return Bad(absl::StrCat("the ", part, " has a '%' at character ", offset + i + 1,
                                " that is not followed by two hex digits"));
      }
      i += 2;
    } else if (!IsPchar(c) && c != '/' && !(query_like && c == '?')) {
      return Bad(absl::StrCat("the ", part, " holds '", std::string(1, c), "' at character ", offset + i + 1,
                              ", which it may not; percent-encode it"));
    }
  }
  return absl::OkStatus();
}

// A name whose last label is a number is read as an IPv4 address by
// resolvers (inet_aton takes "127.1" and "0x7f000001"), so it must be one
// in its plain form, which the address rules can then judge.
bool IsDottedQuad(const std::vector<std::string>& labels) {
  if (labels.size() != 4) return false;
  for (const std::string& l : labels) {
    if (l.empty() || l.size() > 3 || !std::all_of(l.begin(), l.end(), absl::ascii_isdigit)) return false;
    if (l.size() > 1 && l[0] == '0') return false;
    if (std::stoi(l) > 255) return false;
  }
  return true;
}

// A reg-name host: a DNS name, or a dotted-quad IPv4 address.
absl::Status ReadNameHost(absl::string_view text, WebhookUrl* out) {
  if (text.empty()) return Bad("the host is empty");
  if (text.size() > 253) return Bad("the host is longer than 253 characters");
  const std::string host = absl::AsciiStrToLower(text);
  const std::vector<std::string> labels = absl::StrSplit(host, '.');
  for (const std::string& label : labels) {
    if (label.empty()) return Bad(absl::StrCat("the host '", host, "' has an empty label (a dot at an end or two)"));
    if (label.size() > 63) return Bad(absl::StrCat("the host '", host, "' has a label longer than 63 characters"));
    for (char c : label) {
      if (absl::ascii_isalnum(c) || c == '-' || c == '_') continue;
      if (c == '%') return Bad("the host is percent-encoded; write the name itself");
      return Bad(absl::StrCat("the host '", host, "' holds '", std::string(1, c),
                              "'; a host is a DNS name of letters, digits, '-' and '_', or an IP address"));
    }
  }
  const std::string& last = labels.back();
  const bool numeric = std::all_of(last.begin(), last.end(), absl::ascii_isdigit) || absl::StartsWith(last, "0x");
  if (numeric && !IsDottedQuad(labels)) {
    return Bad(absl::StrCat("the host '", host,
                            "' is a number but not an IPv4 address in dotted-quad form "
                            "(four numbers from 0 to 255, no leading zeros)"));
  }
  out->host = host;
  out->ip_literal = numeric;
  return absl::OkStatus();
}

// "[IPv6address]"; IPvFuture and zones (RFC 6874) are refused.
absl::Status ReadIpLiteral(absl::string_view text, WebhookUrl* out) {
  const absl::string_view inside = text.substr(1, text.size() - 2);
  if (!inside.empty() && (inside[0] == 'v' || inside[0] == 'V')) return Bad("IPvFuture hosts are not supported");
  if (inside.find('%') != absl::string_view::npos) return Bad("an IPv6 zone ('%25…') is not allowed in the host");
  in6_addr a;
  const std::string host = absl::AsciiStrToLower(inside);
  if (inet_pton(AF_INET6, host.c_str(), &a) != 1) {
    return Bad(absl::StrCat("the host '[", host, "]' is not an IPv6 address"));
  }
  out->host = host;
  out->ip_literal = true;
  return absl::OkStatus();
}

absl::Status ReadPort(absl::string_view text, WebhookUrl* out) {
  if (text.empty()) return Bad("the port after ':' is empty");
  if (text.size() > 5 || !std::all_of(text.begin(), text.end(), absl::ascii_isdigit) ||
      std::stoi(std::string(text)) < 1 || std::stoi(std::string(text)) > 65535) {
    return Bad(absl::StrCat("the port '", text, "' is not a number from 1 to 65535"));
  }
  out->port = std::stoi(std::string(text));
  return absl::OkStatus();
}

// authority = host [":" port]; user information is refused without being echoed.
absl::Status ReadAuthority(absl::string_view authority, WebhookUrl* out) {
  if (authority.find('@') != absl::string_view::npos) {
    return Bad(
        "user information ('name:password@' before the host) is not allowed: a receiver knows a delivery "
        "by its signature (X-Perfgate-Signature); put a token it needs in the path");
  }
  absl::string_view host = authority, port;
  bool has_port = false;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) return Bad("the IPv6 host has no closing ']'");
    host = authority.substr(0, close + 1);
    const absl::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return Bad("after the IPv6 host's ']' comes ':' and a port, or the path");
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
    if (absl::Status s = ReadIpLiteral(host, out); !s.ok()) return s;
  } else {
    const size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    has_port = colon != absl::string_view::npos;
    if (has_port) port = authority.substr(colon + 1);
    if (absl::Status s = ReadNameHost(host, out); !s.ok()) return s;
  }
  out->port = out->scheme == "https" ? 443 : 80;
  return has_port ? ReadPort(port, out) : absl::OkStatus();
}

// scheme ":" "//"; the offset just past the "//".
absl::StatusOr<size_t> ReadScheme(absl::string_view url, WebhookUrl* out) {
  const size_t colon = url.find(':');
  const absl::string_view scheme = url.substr(0, colon);
  const bool grammar = colon != absl::string_view::npos && colon > 0 && absl::ascii_isalpha(scheme[0]) &&
                       std::all_of(scheme.begin(), scheme.end(), [](char c) {
                         return absl::ascii_isalnum(c) || c == '+' || c == '-' || c == '.';
                       });
  if (!grammar) return Bad("there is no scheme; begin with http:// or https://");
  out->scheme = absl::AsciiStrToLower(scheme);
  if (out->scheme != "http" && out->scheme != "https") {
    return Bad(absl::StrCat("the scheme '", out->scheme, "' is not http or https"));
  }
  if (url.substr(colon + 1, 2) != "//") return Bad(absl::StrCat("after '", out->scheme, ":' comes '//' and a host"));
  return colon + 3;
}

using Bytes = std::array<uint8_t, 16>;

// Whether the first `bits` bits of `a` are those of `p`.
bool InPrefix(const IpAddress& a, const Bytes& p, int bits) {
  for (int i = 0; bits > 0; ++i, bits -= 8) {
    const uint8_t mask = bits >= 8 ? 0xff : static_cast<uint8_t>(0xff << (8 - bits));
    if ((a.bytes[i] & mask) != (p[i] & mask)) return false;
  }
  return true;
}

IpAddress V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  IpAddress out;
  out.bytes[0] = a, out.bytes[1] = b, out.bytes[2] = c, out.bytes[3] = d;
  return out;
}

struct Range {
  Bytes prefix;
  int bits;
  const char* what;
};

const Range kV4Ranges[] = {
    {{0}, 8, "unspecified (0.0.0.0/8)"},
    {{10}, 8, "private (RFC 1918, 10.0.0.0/8)"},
    {{100, 64}, 10, "shared CGNAT (100.64.0.0/10)"},
    {{127}, 8, "loopback (127.0.0.0/8)"},
    {{169, 254}, 16, "link-local (169.254.0.0/16)"},
    {{172, 16}, 12, "private (RFC 1918, 172.16.0.0/12)"},
    {{192, 0, 0}, 24, "IETF protocol assignment (192.0.0.0/24)"},
    {{192, 0, 2}, 24, "documentation (192.0.2.0/24)"},
    {{192, 168}, 16, "private (RFC 1918, 192.168.0.0/16)"},
    {{198, 18}, 15, "benchmarking (198.18.0.0/15)"},
    {{198, 51, 100}, 24, "documentation (198.51.100.0/24)"},
    {{203, 0, 113}, 24, "documentation (203.0.113.0/24)"},
    {{224}, 4, "multicast (224.0.0.0/4)"},
    {{240}, 4, "reserved or broadcast (240.0.0.0/4)"},
};

const Range kV6Ranges[] = {
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 128, "unspecified (::)"},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 128, "loopback (::1)"},
    {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, "local-use NAT64 (64:ff9b:1::/48)"},
    {{1, 0, 0, 0, 0, 0, 0, 0}, 64, "discard-only (100::/64)"},
    {{0x20, 0x01, 0x0d, 0xb8}, 32, "documentation (2001:db8::/32)"},
    {{0xfc}, 7, "unique local (ULA, fc00::/7)"},
    {{0xfe, 0x80}, 10, "link-local (fe80::/10)"},
    {{0xfe, 0xc0}, 10, "site-local (fec0::/10)"},
    {{0xff}, 8, "multicast (ff00::/8)"},
};

// Instance-metadata services: AWS, GCP, Azure and others at
// 169.254.169.254, AWS ECS tasks at 169.254.170.2, Alibaba at
// 100.100.100.200, AWS's IPv6 endpoint at fd00:ec2::254.
bool IsMetadata(const IpAddress& a) {
  if (!a.v6) {
    return InPrefix(a, {169, 254, 169, 254}, 32) || InPrefix(a, {169, 254, 170, 2}, 32) ||
           InPrefix(a, {100, 100, 100, 200}, 32);
  }
  return InPrefix(a, {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x54}, 128);
}

// The IPv4 address an IPv6 one carries where it reaches that IPv4 address.
bool EmbeddedV4(const IpAddress& a, IpAddress* v4) {
  const auto& b = a.bytes;
  size_t at = 0;
  if (InPrefix(a, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96) || InPrefix(a, {0, 0x64, 0xff, 0x9b}, 96)) {
    at = 12;
  } else if (InPrefix(a, {0x20, 0x02}, 16)) {
    at = 2;
  } else if (InPrefix(a, {}, 96)) {
    at = 12;  // IPv4-compatible (deprecated); :: and ::1 were judged before
  } else {
    return false;
  }
  *v4 = V4(b[at], b[at + 1], b[at + 2], b[at + 3]);
  return true;
}

}  // namespace

absl::StatusOr<WebhookUrl> ParseWebhookUrl(absl::string_view url) {
  if (url.empty()) return Bad("it is empty");
  if (url.size() > kMaxUrl) return Bad(absl::StrCat("it is longer than ", kMaxUrl, " characters"));
  if (absl::Status s = CheckCharacters(url); !s.ok()) return s;
  WebhookUrl out;
  auto start = ReadScheme(url, &out);
  if (!start.ok()) return start.status();
  const size_t authority_end = std::min(url.find_first_of("/?#", *start), url.size());
  if (absl::Status s = ReadAuthority(url.substr(*start, authority_end - *start), &out); !s.ok()) return s;
  const size_t query_at = std::min(url.find_first_of("?#", authority_end), url.size());
  const size_t fragment_at = std::min(url.find('#', authority_end), url.size());
  const absl::string_view path = url.substr(authority_end, query_at - authority_end);
  if (absl::Status s = CheckComponent(path, authority_end, "path", false); !s.ok()) return s;
  out.target = path.empty() ? "/" : std::string(path);
  if (query_at < fragment_at) {  // a '?' begins the query
    const absl::string_view query = url.substr(query_at + 1, fragment_at - query_at - 1);
    if (absl::Status s = CheckComponent(query, query_at + 1, "query", true); !s.ok()) return s;
    absl::StrAppend(&out.target, "?", query);
  }
  if (fragment_at < url.size()) {
    if (absl::Status s = CheckComponent(url.substr(fragment_at + 1), fragment_at + 1, "fragment", true); !s.ok()) {
      return s;
    }
  }
  return out;
}

std::string WithoutUserinfo(absl::string_view url) {
  const size_t start = url.find("://");
  if (start == absl::string_view::npos) return std::string(url);
  const size_t end = std::min(url.find_first_of("/?#", start + 3), url.size());
  const size_t at = url.substr(0, end).rfind('@');
  if (at == absl::string_view::npos || at < start) return std::string(url);
  return absl::StrCat(url.substr(0, start + 3), url.substr(at + 1));
}

std::string HostHeader(const WebhookUrl& url) {
  const bool v6 = url.ip_literal && url.host.find(':') != std::string::npos;
  std::string out = v6 ? absl::StrCat("[", url.host, "]") : url.host;
  if (url.port != (url.scheme == "https" ? 443 : 80)) absl::StrAppend(&out, ":", url.port);
  return out;
}

absl::StatusOr<IpAddress> ParseIpAddress(const std::string& text) {
  IpAddress a;
  if (inet_pton(AF_INET, text.c_str(), a.bytes.data()) == 1) return a;
  a.v6 = true;
  if (inet_pton(AF_INET6, text.c_str(), a.bytes.data()) == 1) return a;
  return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not an IP address"));
}

std::string ToString(const IpAddress& a) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(a.v6 ? AF_INET6 : AF_INET, a.bytes.data(), text, sizeof(text));
  return text;
}

AddressKind ClassifyAddress(const IpAddress& a, std::string* why) {
  if (IsMetadata(a)) {
    *why = "cloud instance-metadata";
    return AddressKind::kMetadata;
  }
  if (!a.v6) {
    for (const Range& r : kV4Ranges) {
      if (InPrefix(a, r.prefix, r.bits)) {
        *why = r.what;
        return AddressKind::kPrivate;
      }
    }
    return AddressKind::kPublic;
  }
  for (const Range& r : kV6Ranges) {
    if (InPrefix(a, r.prefix, r.bits)) {
      *why = r.what;
      return AddressKind::kPrivate;
    }
  }
  IpAddress v4;
  return EmbeddedV4(a, &v4) ? ClassifyAddress(v4, why) : AddressKind::kPublic;
}

absl::StatusOr<std::vector<IpAddress>> ResolveHost(const WebhookUrl& url) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = url.ip_literal ? AI_NUMERICHOST : 0;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(url.host.c_str(), nullptr, &hints, &found);
  if (rc != 0) return absl::UnavailableError(absl::StrCat("its host does not resolve (", gai_strerror(rc), ")"));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, freeaddrinfo);
  std::vector<IpAddress> out;
  for (const addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
    IpAddress a;
    if (ai->ai_family == AF_INET) {
      std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in*>(ai->ai_addr)->sin_addr, 4);
    } else if (ai->ai_family == AF_INET6) {
      a.v6 = true;
      std::memcpy(a.bytes.data(), &reinterpret_cast<const sockaddr_in6*>(ai->ai_addr)->sin6_addr, 16);
    } else {
      continue;
    }
    const bool seen = std::any_of(out.begin(), out.end(),
                                  [&](const IpAddress& b) { return b.v6 == a.v6 && b.bytes == a.bytes; });
    if (!seen) out.push_back(a);
  }
  if (out.empty()) return absl::UnavailableError("its host resolves to no IPv4 or IPv6 address");
  return out;
}

absl::StatusOr<std::vector<IpAddress>> CheckedAddresses(const WebhookUrl& url, bool allow_private) {
  auto addresses = ResolveHost(url);
  if (!addresses.ok()) return addresses.status();
  for (const IpAddress& a : *addresses) {
    std::string why;
    const AddressKind kind = ClassifyAddress(a, &why);
    if (kind == AddressKind::kMetadata) {
      return absl::PermissionDeniedError("refused: its host resolves to a cloud instance-metadata address");
    }
    if (kind == AddressKind::kPrivate && !allow_private) {
      return absl::PermissionDeniedError(absl::StrCat("refused: its host resolves to a ", why,
                                                      " address, and the endpoint was not added with "
                                                      "--allow-private"));
    }
  }
  return addresses;
}

absl::Status CheckWebhookUrl(absl::string_view text, bool allow_private) {
  auto url = ParseWebhookUrl(text);
  if (!url.ok()) return url.status();
  std::string why;
  AddressKind kind = AddressKind::kPublic;
  if (url->ip_literal) {
    auto address = ParseIpAddress(url->host);
    if (!address.ok()) return Bad(address.status().message());
    kind = ClassifyAddress(*address, &why);
  } else if (url->host == "localhost" || absl::EndsWith(url->host, ".localhost")) {
    kind = AddressKind::kPrivate;  // RFC 6761: always the loopback
    why = "loopback (localhost)";
  }
  if (kind == AddressKind::kMetadata) {
    return Bad(absl::StrCat("the host ", url->host, " is a cloud instance-metadata address; never posted to"));
  }
  if (kind == AddressKind::kPrivate && !allow_private) {
    return Bad(absl::StrCat("the host ", url->host, " is a ", why,
                            " address; add the endpoint with --allow-private if its receiver is meant to be "
                            "there"));
  }
  return absl::OkStatus();
}

}  // namespace perfgate::coordinator
