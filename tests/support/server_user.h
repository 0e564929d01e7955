// What postgres.cc and shared_postgres.cc share of starting a server: the
// OS user it runs as, and the retry while its free port was taken.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace perfgate::testing {

/// Gives `path` to the server's OS user (postgres) when called as root, as
/// PostgreSQL refuses to run as root; nothing otherwise.
absl::Status GiveToServerUser(const std::string& path);

/// Runs `launch` until it is not UNAVAILABLE (another process took the free
/// port between FreeTcpPort() and the server's bind), five times at most.
template <typename Launch>
absl::Status LaunchRetryingTakenPorts(Launch launch) {
  absl::Status launched;
  for (int attempt = 0; attempt < 5; ++attempt) {
    launched = launch();
    if (launched.ok() || !absl::IsUnavailable(launched)) break;
  }
  return launched;
}

}  // namespace perfgate::testing
