// The coordinator binary started for an end-to-end test: on a loopback port
// the kernel picks (or a given one), over the test's PostgreSQL, its output
// in a log file, and the address it listens on read from that output.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/processes.h"

namespace perfgate::testing {

struct RunningCoordinator {
  std::unique_ptr<ChildProcess> process;
  std::string address;  // "127.0.0.1:<port>"
};

/// Starts `perfgate-coordinator --database <conninfo> serve --listen
/// 127.0.0.1:<port> <extra...>` (port 0: any free one) and waits up to 30 s
/// for "listening on"; the error carries the tail of its log.
absl::StatusOr<RunningCoordinator> StartCoordinator(const std::string& conninfo, const std::string& log_path,
                                                    const std::vector<std::string>& extra = {}, int port = 0);

}  // namespace perfgate::testing
