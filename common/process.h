// Child processes started from an argument vector, never through a shell:
// values that came from outside (a commit from CI, a side's command line)
// reach the child as argv words and nothing else.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace perfgate {

/// Runs argv (looked up in PATH) with stdout captured; stderr passes through,
/// or goes to /dev/null when `quiet` is set. Returns the exit status (128 +
/// signal when killed) and what the child printed on stdout;
/// FAILED_PRECONDITION when it cannot be started.
absl::StatusOr<std::pair<int, std::string>> CaptureOutput(const std::vector<std::string>& argv,
                                                          bool quiet = false);

/// How RunProcess treats the child.
struct ProcessOptions {
  bool capture_stdout = true;  // false: the child's stdout is read and dropped
  bool quiet = false;          // stderr to /dev/null instead of passing through
  bool merge_stderr = false;   // stderr into the same pipe as stdout (captured with it)
  /// > 0: the child (and every process of its group) is killed once it has
  /// run this many seconds.
  double timeout_s = 0;
  std::string working_dir;  // non-empty: the child starts in this folder
};

/// What a child did.
struct ProcessResult {
  int exit_code = 0;       // its exit status, or 128 + the signal that ended it
  bool timed_out = false;  // killed at ProcessOptions::timeout_s
  std::string out;         // its stdout, when captured
};

/// Runs argv (looked up in PATH) as CaptureOutput does, with a time limit:
/// the child starts a process group of its own, so that what it starts in
/// turn is killed with it. FAILED_PRECONDITION when it cannot be started.
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options);

/// "exited with 3", "was killed by signal 11 (Segmentation fault)", or "ran
/// past its time limit of 60 s and was killed": what became of a child.
std::string DescribeExit(const ProcessResult& r, double timeout_s);

/// A fresh folder (mkdtemp in $TMPDIR, else /tmp), removed with all it
/// holds when this goes.
class TempDir {
 public:
  /// `prefix` starts the folder's name.
  static absl::StatusOr<TempDir> Make(const std::string& prefix);
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

/// The CPUs this process may run on (sched_getaffinity), ascending; empty
/// when the kernel does not say.
std::vector<int> AllowedCpus();

/// While it lives, the calling thread runs on `cpus` alone, and so does
/// every process it starts meanwhile (a child inherits its parent thread's
/// affinity); the thread's own set comes back when it goes. An empty
/// `cpus`, or a set the kernel refuses, changes nothing (ok() says which).
class ScopedCpuPin {
 public:
  explicit ScopedCpuPin(const std::vector<int>& cpus);
  ScopedCpuPin(const ScopedCpuPin&) = delete;
  ScopedCpuPin& operator=(const ScopedCpuPin&) = delete;
  ~ScopedCpuPin();
  /// Whether the thread now runs on the set asked for.
  bool ok() const { return pinned_; }

 private:
  bool pinned_ = false;
  std::vector<int> before_;
};

/// `git ARGS...` in the current directory, its stdout without the trailing
/// newline; empty when git is missing or fails.
std::string Git(const std::vector<std::string>& args);

}  // namespace perfgate
