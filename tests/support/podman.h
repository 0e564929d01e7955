// podman as the container tests run it here (docs/containers.md, "Testing"):
// as root, with runc and cgroupfs and no default ulimits, each step's output
// printed so that a failure shows every step.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/support/processes.h"

namespace perfgate::testing {

/// A fresh temporary folder holding the containers.conf podman needs here,
/// with CONTAINERS_CONF pointed at it; FAILED_PRECONDITION, saying how to
/// install it, when podman is not in PATH.
absl::StatusOr<std::unique_ptr<TempDir>> PodmanDir(const std::string& prefix);

/// Runs argv (no shell) and prints "--- argv[0] argv[1] (exit N) ---" and its
/// output; a command that cannot be started is a test failure and an empty
/// result (exit -1).
CommandResult Exec(const std::vector<std::string>& argv,
                   std::chrono::milliseconds timeout = std::chrono::minutes(4));

}  // namespace perfgate::testing
