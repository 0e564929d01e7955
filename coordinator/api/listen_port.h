// Listening ports that are this process's alone: bound without
// SO_REUSEPORT, so a second coordinator started on a port the first one
// holds is refused by the kernel instead of silently taking half of its
// connections, and the refusal names the port.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace perfgate::coordinator {

/// A host and port parsed from "host:port" ("[::1]:8080" for IPv6).
struct HostPort {
  std::string host;
  int port = 0;
};

/// Parses `listen` (INVALID_ARGUMENT naming `option` when it is not
/// host:port with a port of 0 to 65535).
absl::StatusOr<HostPort> ParseHostPort(const std::string& listen, const std::string& option);

/// A listening TCP socket (close-on-exec, SO_REUSEADDR only) on `where`;
/// port 0 picks a free one. UNAVAILABLE names the port when it is in use
/// and says what else refused the address otherwise.
absl::StatusOr<int> ListenTcp(const HostPort& where);

/// Why `where` cannot be bound, found by trying (for a library that does
/// not tell): UNAVAILABLE naming the port when it is in use, or the
/// system's reason; OK when it could be bound now.
absl::Status WhyCannotListen(const HostPort& where);

/// The port a listening socket is bound to; 0 when it cannot be read.
int BoundPort(int fd);

}  // namespace perfgate::coordinator
