#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ctime>
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace perfgate {
namespace {

// Reads the pipe until the child closes it or the deadline passes; false
// when the deadline passed first.
bool Drain(int fd, std::chrono::steady_clock::time_point deadline, bool bounded, std::string* out) {
  char buf[65536];
  while (true) {
    int wait_ms = -1;
    if (bounded) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1000LL * 3600));
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;  // the loop checks the deadline
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n > 0) {
      if (out != nullptr) out->append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      return true;
    }
  }
}

// Waits for the child; a bounded one that closed its stdout early and then
// hung is killed at the deadline.
int Reap(pid_t pid, std::chrono::steady_clock::time_point deadline, bool bounded, bool* timed_out) {
  int status = 0;
  while (true) {
    const pid_t r = waitpid(pid, &status, bounded ? WNOHANG : 0);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return status;
    if (r == 0 && std::chrono::steady_clock::now() >= deadline) {
      *timed_out = true;
      kill(-pid, SIGKILL);
      bounded = false;  // now wait for it to go
    } else if (r == 0) {
      timespec pause{0, 10 * 1000 * 1000};
      nanosleep(&pause, nullptr);
    }
  }
}

}  // namespace

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty()) return absl::InvalidArgumentError("an empty command");
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  if (options.merge_stderr) {
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  } else if (options.quiet) {
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }
  if (!options.working_dir.empty()) posix_spawn_file_actions_addchdir_np(&actions, options.working_dir.c_str());
  // A group of its own when it may have to be killed, so that its children
  // (a benchmark a wrapper script starts) go with it.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  const bool bounded = options.timeout_s > 0;
  if (bounded) {
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return absl::FailedPreconditionError(absl::StrCat("cannot start '", argv[0], "': ", std::strerror(rc)));
  }
  ProcessResult result;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<long long>(options.timeout_s * 1000));
  // Output not captured is read and dropped, so that the pipe's end tells
  // when the child and what it started are done.
  if (!Drain(fds[0], deadline, bounded, options.capture_stdout ? &result.out : nullptr)) {
    result.timed_out = true;
    kill(-pid, SIGKILL);
  }
  close(fds[0]);
  const int status = Reap(pid, deadline, bounded, &result.timed_out);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

absl::StatusOr<std::pair<int, std::string>> CaptureOutput(const std::vector<std::string>& argv, bool quiet) {
  ProcessOptions options;
  options.quiet = quiet;
  auto r = RunProcess(argv, options);
  if (!r.ok()) return r.status();
  return std::make_pair(r->exit_code, std::move(r->out));
}

std::string DescribeExit(const ProcessResult& r, double timeout_s) {
  if (r.timed_out) return absl::StrCat("ran past its time limit of ", timeout_s, " s and was killed");
  if (r.exit_code > 128) {
    const int sig = r.exit_code - 128;
    return absl::StrCat("was killed by signal ", sig, " (", strsignal(sig), ")");
  }
  return absl::StrCat("exited with ", r.exit_code);
}

absl::StatusOr<TempDir> TempDir::Make(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/", prefix, "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot make a folder like ", tmpl, ": ", std::strerror(errno)));
  }
  return TempDir(std::move(tmpl));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

TempDir::~TempDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

namespace {

std::vector<int> CpusOf(const cpu_set_t& set) {
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

// sched_setaffinity on the calling thread (pid 0 names the thread).
bool PinThread(const std::vector<int>& cpus) {
  if (cpus.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) {
    if (c < 0 || c >= CPU_SETSIZE) return false;
    CPU_SET(c, &set);
  }
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

std::vector<int> ThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  return CpusOf(set);
}

}  // namespace

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(getpid(), sizeof set, &set) != 0) return {};
  return CpusOf(set);
}

ScopedCpuPin::ScopedCpuPin(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  before_ = ThreadCpus();
  if (before_.empty()) return;
  pinned_ = PinThread(cpus);
}

ScopedCpuPin::~ScopedCpuPin() {
  if (pinned_) PinThread(before_);
}

std::string Git(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto ran = CaptureOutput(argv, /*quiet=*/true);
  if (!ran.ok() || ran->first != 0) return "";
  return std::string(absl::StripTrailingAsciiWhitespace(ran->second));
}

}  // namespace perfgate
