// Child processes started from an argument vector, never through a shell:
// values that came from outside (a commit from CI, a side's command line)
// reach the child as argv words and nothing else.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace perfgate::agent {

/// Runs argv (looked up in PATH) with stdout captured; stderr passes through,
/// or goes to /dev/null when `quiet` is set. Returns the exit status (128 +
/// signal when killed) and what the child printed on stdout;
/// FAILED_PRECONDITION when it cannot be started.
absl::StatusOr<std::pair<int, std::string>> CaptureOutput(const std::vector<std::string>& argv,
                                                          bool quiet = false);

/// `git ARGS...` in the current directory, its stdout without the trailing
/// newline; empty when git is missing or fails.
std::string Git(const std::vector<std::string>& args);

}  // namespace perfgate::agent
