// Process and filesystem helpers for tests that run real servers (PostgreSQL,
// the coordinator binary) as child processes: free ports, temporary
// directories, one-shot commands and long-running children whose output is
// captured in a file.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace perfgate::testing {

/// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, read,
/// closed). Another process may take it before the caller binds it, so a
/// server started on it should be retried on "address in use".
absl::StatusOr<int> FreeTcpPort();

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it
/// when the object is destroyed.
class TempDir {
 public:
  /// Creates the directory; prefix becomes the start of its name.
  static absl::StatusOr<TempDir> Create(const std::string& prefix = "perfgate-test-");
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&& other) noexcept;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();

  /// The directory's absolute path.
  const std::string& path() const { return path_; }
  /// path() + "/" + name.
  std::string Join(const std::string& name) const;

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;  // empty once moved from
};

/// Removes path and everything under it (like rm -rf); OK when it is absent.
absl::Status RemoveTree(const std::string& path);
/// Starts a watcher process that removes path and everything under it once
/// this process has ended, however it ends (an exit, a crash, SIGKILL): for
/// what a long run leaves in $TMPDIR, a database of gigabytes. Call it before
/// this process starts a thread (it forks).
absl::Status RemoveTreeWhenThisProcessEnds(const std::string& path);
/// The whole content of a file.
absl::StatusOr<std::string> ReadFile(const std::string& path);
/// The last max_lines lines of a file ("" when it cannot be read).
std::string FileTail(const std::string& path, int max_lines = 40);

/// How to start a process.
struct ProcessOptions {
  std::map<std::string, std::string> env;  // added to (or replacing in) the current environment
  std::string working_dir;                 // empty: the current one
  // Run as this user (the process must be root to switch; PostgreSQL refuses
  // to run as root). Empty: as the current user.
  std::string user;
};

/// What a finished command did.
struct CommandResult {
  int exit_code = -1;  // exit status, or 128 + signal when killed by one
  std::string output;  // stdout and stderr, interleaved
};

/// Runs argv[0] (looked up in PATH when it has no '/') with argv, waits for it
/// and returns its exit code and output. No shell is involved, so arguments
/// need no quoting. Fails only when the command cannot be started or exceeds
/// timeout (it is then killed); a non-zero exit is a result, not an error.
absl::StatusOr<CommandResult> RunCommand(
    const std::vector<std::string>& argv, const ProcessOptions& options = {},
    std::chrono::milliseconds timeout = std::chrono::minutes(2));

/// The full path of an executable found in PATH, or nullopt.
std::optional<std::string> FindInPath(const std::string& name);

/// A built binary by its path under the build tree, e.g. "agent/perfgate-agent";
/// the build tree is PERFGATE_BIN_DIR, which CTest sets ("." without it).
std::string Bin(const std::string& relative);

/// A long-running child (a server). Its stdout and stderr go to one file,
/// which WaitForLine() polls. The child is stopped when the object is
/// destroyed; should the test process die first, the child gets SIGKILL
/// (PR_SET_PDEATHSIG), so a crashed test leaves no server behind. The kernel
/// ties that signal to the starting thread: start children from a thread that
/// outlives them (the test's main thread). The child runs in its own session
/// with stdin from /dev/null and no other inherited descriptors.
class ChildProcess {
 public:
  /// Starts argv with options.env added to the environment. output_path is the
  /// file that receives stdout+stderr (created or truncated).
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(const std::vector<std::string>& argv,
                                                             const std::string& output_path,
                                                             const ProcessOptions& options = {});
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  /// Kill()s the child if it is still running.
  ~ChildProcess();

  /// Waits until a line of the captured output contains substring. Returns
  /// false when timeout passes first or the child exits without printing it.
  bool WaitForLine(const std::string& substring, std::chrono::milliseconds timeout);

  /// Sends SIGTERM and waits for the child to exit; after 10 s sends SIGKILL.
  /// Returns the exit code (128 + signal when killed by one).
  int Kill() { return Stop(SIGTERM, std::chrono::seconds(10)); }
  /// Sends sig, waits up to grace for the child to exit, then sends SIGKILL
  /// and waits. Returns the exit code (128 + signal when killed by one); the
  /// same code again when the child had already been reaped.
  int Stop(int sig, std::chrono::milliseconds grace);

  /// True while the child has not exited (reaps it when it has).
  bool Running();
  /// Waits up to timeout for the child to exit on its own; its exit code
  /// (128 + signal), or nullopt when it is still running.
  std::optional<int> Wait(std::chrono::milliseconds timeout);

  pid_t pid() const { return pid_; }
  const std::string& output_path() const { return output_path_; }
  /// Everything the child printed so far.
  std::string Output() const;
  /// The last max_lines lines the child printed.
  std::string OutputTail(int max_lines = 40) const { return FileTail(output_path_, max_lines); }

 private:
  ChildProcess(pid_t pid, std::string output_path)
      : pid_(pid), output_path_(std::move(output_path)) {}
  bool Reap(bool block);

  pid_t pid_;
  std::string output_path_;
  std::optional<int> exit_code_;
};

}  // namespace perfgate::testing
