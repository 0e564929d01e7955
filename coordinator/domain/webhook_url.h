// A webhook endpoint's URL read with RFC 3986's grammar (an absolute
// http:// or https:// URI), and the addresses a delivery may reach.
//
// Why a grammar of our own: cpp-httplib splits a URL with a loose regular
// expression and curl is not linked. Why the address rules: the coordinator
// sits inside a private network, so an endpoint that names a loopback,
// private, link-local or cloud-metadata address (directly or through a
// name that resolves there) would let whoever adds a webhook make the
// coordinator POST to internal services (SSRF). Such addresses are
// refused unless the endpoint was added with --allow-private; the cloud
// metadata addresses are refused even then.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace perfgate::coordinator {

/// The parts of an http(s) URL a delivery needs.
struct WebhookUrl {
  std::string scheme;       // "http" or "https", lower case
  std::string host;         // a DNS name (lower case), a dotted-quad IPv4 or an IPv6 address without brackets
  bool ip_literal = false;  // host is an address, not a name
  int port = 0;             // as written, else 80 or 443
  std::string target;       // path and query as sent in the request line; "/" at least
};

/// `url` read as an absolute http:// or https:// URI (RFC 3986). Refused
/// with INVALID_ARGUMENT naming the part and character position: a space,
/// a control or non-ASCII character, another scheme, user information
/// ("user:password@", never echoed), an empty or malformed host, a number
/// that is not a dotted-quad IPv4 address, an IPv6 zone, a bad port or a
/// character the path, query or fragment may not hold. The fragment is
/// dropped: it is never sent.
absl::StatusOr<WebhookUrl> ParseWebhookUrl(absl::string_view url);

/// `url` with any user information before its host ("name:password@")
/// left out, for showing a URL stored before such URLs were refused.
std::string WithoutUserinfo(absl::string_view url);

/// The Host header of a request to `url`: the host (an IPv6 address in
/// brackets) and the port when it is not the scheme's default.
std::string HostHeader(const WebhookUrl& url);

/// An IPv4 or IPv6 address.
struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4 in the first four
};

/// `text` read as an IPv4 (dotted-quad) or IPv6 address; INVALID_ARGUMENT
/// when it is neither.
absl::StatusOr<IpAddress> ParseIpAddress(const std::string& text);

/// The address written as text (inet_ntop), for logs and the connection.
std::string ToString(const IpAddress& a);

/// How `a` may be reached by a webhook delivery.
enum class AddressKind {
  kPublic,    // globally routable unicast
  kPrivate,   // loopback, private, link-local, CGNAT, unspecified, multicast, reserved: needs --allow-private
  kMetadata,  // a cloud provider's instance-metadata service: never
};

/// Which kind `a` is, and in `why` (when not public) what it is, e.g.
/// "loopback" or "private (RFC 1918)". IPv4 addresses mapped or embedded
/// in IPv6 (::ffff:0:0/96, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged
/// as the IPv4 address they carry.
AddressKind ClassifyAddress(const IpAddress& a, std::string* why);

/// The addresses `url`'s host resolves to (once, with getaddrinfo), or its
/// literal address; UNAVAILABLE naming the host when it does not resolve.
absl::StatusOr<std::vector<IpAddress>> ResolveHost(const WebhookUrl& url);

/// The addresses of `url`'s host that a delivery may connect to: every
/// address it resolved to is checked, and PERMISSION_DENIED says what kind
/// of address it was (never the URL) when any is not public and
/// `allow_private` is false, or when any is a metadata address.
absl::StatusOr<std::vector<IpAddress>> CheckedAddresses(const WebhookUrl& url, bool allow_private);

/// The check made when an endpoint is added, before any name is resolved:
/// the URL parses, and a literal address (or `localhost`, RFC 6761) is
/// public or allowed. INVALID_ARGUMENT naming what is wrong.
absl::Status CheckWebhookUrl(absl::string_view url, bool allow_private);

}  // namespace perfgate::coordinator
