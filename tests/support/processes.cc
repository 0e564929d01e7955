#include "tests/support/processes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace perfgate::testing {
namespace {

// How often waits re-check a condition they cannot block on (a file growing,
// a child exiting with a deadline).
constexpr auto kPollInterval = std::chrono::milliseconds(5);

absl::Status ErrnoStatus(const std::string& what, int err) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(err)));
}

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

std::string TempRoot() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? std::string(tmp) : std::string("/tmp");
}

// Everything the child needs, prepared before fork(): between fork and exec in
// a multi-threaded process only async-signal-safe calls are allowed, so no
// allocation, no getpwnam, no PATH search happens there.
struct SpawnPlan {
  std::string exe;
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, envp;
  std::string working_dir;
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
  int kill_with_parent = 0;  // PR_SET_PDEATHSIG signal, 0 for none
  pid_t parent = 0;          // the forking process, to catch its death before prctl
};

absl::StatusOr<SpawnPlan> Plan(const std::vector<std::string>& argv,
                               const ProcessOptions& options) {
  if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("empty command line");
  SpawnPlan plan;
  if (argv[0].find('/') != std::string::npos) {
    plan.exe = argv[0];
  } else {
    auto found = FindInPath(argv[0]);
    if (!found) {
      return absl::NotFoundError(absl::StrCat("'", argv[0], "' was not found in PATH"));
    }
    plan.exe = *found;
  }
  plan.argv_storage = argv;
  plan.parent = getpid();

  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    const size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  plan.working_dir = options.working_dir;
  if (!options.user.empty()) {
    errno = 0;
    const passwd* pw = getpwnam(options.user.c_str());
    if (pw == nullptr) {
      return absl::NotFoundError(absl::StrCat("user '", options.user, "' does not exist"));
    }
    plan.switch_user = geteuid() != pw->pw_uid;
    plan.uid = pw->pw_uid;
    plan.gid = pw->pw_gid;
    int n = 32;
    plan.groups.resize(n);
    if (getgrouplist(pw->pw_name, pw->pw_gid, plan.groups.data(), &n) < 0) {
      plan.groups.resize(n);
      getgrouplist(pw->pw_name, pw->pw_gid, plan.groups.data(), &n);
    }
    plan.groups.resize(n);
    env["HOME"] = pw->pw_dir;
    env["USER"] = pw->pw_name;
    env["LOGNAME"] = pw->pw_name;
    // The new user may not be allowed into the caller's working directory.
    if (plan.working_dir.empty()) plan.working_dir = "/";
  }
  for (const auto& [k, v] : options.env) env[k] = v;
  for (const auto& [k, v] : env) plan.env_storage.push_back(absl::StrCat(k, "=", v));

  for (auto& a : plan.argv_storage) plan.argv.push_back(a.data());
  plan.argv.push_back(nullptr);
  for (auto& e : plan.env_storage) plan.envp.push_back(e.data());
  plan.envp.push_back(nullptr);
  return plan;
}

// Only async-signal-safe calls from here until execve.
[[noreturn]] void ChildExec(const SpawnPlan& plan, int stdin_fd, int out_fd, int error_pipe) {
  auto fail = [error_pipe]() {
    const int err = errno;
    (void)!write(error_pipe, &err, sizeof(err));
    _exit(127);
  };
  if (dup2(stdin_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0 ||
      dup2(out_fd, STDERR_FILENO) < 0) {
    fail();
  }
  // Descriptors the test process left inheritable (sockets, files) must not
  // keep a server's peer alive or a file open after the test closes them.
  if (error_pipe > 3) close_range(3, error_pipe - 1, 0);
  close_range(error_pipe + 1, UINT_MAX, 0);
  setsid();  // its own process group: a ^C to the test does not hit it twice
  if (plan.switch_user) {
    if (setgroups(plan.groups.size(), plan.groups.data()) != 0 || setgid(plan.gid) != 0 ||
        setuid(plan.uid) != 0) {
      fail();
    }
  }
  // After setuid: changing credentials clears the parent-death signal.
  if (plan.kill_with_parent != 0) {
    if (prctl(PR_SET_PDEATHSIG, plan.kill_with_parent) != 0) fail();
    if (getppid() != plan.parent) _exit(127);  // the parent is already gone
  }
  if (!plan.working_dir.empty() && chdir(plan.working_dir.c_str()) != 0) fail();
  execve(plan.exe.c_str(), plan.argv.data(), plan.envp.data());
  fail();
  _exit(127);
}

// Forks and execs plan with stdout+stderr on out_fd; returns the child's pid
// once exec succeeded, or why it did not.
absl::StatusOr<pid_t> Spawn(const SpawnPlan& plan, int out_fd) {
  const int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) return ErrnoStatus("open /dev/null", errno);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    close(devnull);
    return ErrnoStatus("pipe2", errno);
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(error_pipe[0]);
    ChildExec(plan, devnull, out_fd, error_pipe[1]);
  }
  const int fork_errno = errno;
  close(error_pipe[1]);
  close(devnull);
  if (pid < 0) {
    close(error_pipe[0]);
    return ErrnoStatus("fork", fork_errno);
  }
  // The pipe closes on a successful exec (O_CLOEXEC) and carries errno otherwise.
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(error_pipe[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  close(error_pipe[0]);
  if (n > 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return ErrnoStatus(absl::StrCat("cannot start ", plan.exe), child_errno);
  }
  return pid;
}

}  // namespace

absl::StatusOr<int> FreeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return ErrnoStatus("socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    close(fd);
    return ErrnoStatus("bind 127.0.0.1:0", err);
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

absl::StatusOr<TempDir> TempDir::Create(const std::string& prefix) {
  std::string tmpl = absl::StrCat(TempRoot(), "/", prefix, "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return ErrnoStatus(absl::StrCat("mkdtemp ", tmpl), errno);
  return TempDir(std::move(tmpl));
}

TempDir::TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }

TempDir& TempDir::operator=(TempDir&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) (void)RemoveTree(path_);
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

TempDir::~TempDir() {
  if (!path_.empty()) (void)RemoveTree(path_);
}

std::string TempDir::Join(const std::string& name) const { return absl::StrCat(path_, "/", name); }

absl::Status RemoveTree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot remove ", path, ": ", ec.message()));
  return absl::OkStatus();
}

absl::Status RemoveTreeWhenThisProcessEnds(const std::string& path) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus("pipe2", errno);
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    close(fds[0]);
    close(fds[1]);
    return ErrnoStatus("fork", err);
  }
  if (pid == 0) {
    // The watcher: its own session (a Ctrl-C of the terminal must not end it
    // first), no descriptor of the parent's but the pipe (it must not hold a
    // caller's output pipe open), and it waits for the write end to close,
    // which happens when the parent ends, however it ends.
    setsid();
    const int ends = fcntl(fds[0], F_DUPFD, 3);  // above stdio, whatever the parent had open
    const int devnull = open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; ++fd) dup2(devnull, fd);
    if (ends > 3) close_range(3, ends - 1, 0);
    close_range(ends + 1, ~0U, 0);
    char c;
    while (read(ends, &c, 1) < 0 && errno == EINTR) {
    }
    // A server of the parent's may still be writing there as it shuts down.
    for (int attempt = 0; attempt < 60; ++attempt) {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
      if (!std::filesystem::exists(path, ec)) break;
      sleep(1);
    }
    _exit(0);
  }
  close(fds[0]);  // fds[1] stays open, unseen by children (O_CLOEXEC), until this process ends
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ErrnoStatus(absl::StrCat("cannot open ", path), errno);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string FileTail(const std::string& path, int max_lines) {
  auto content = ReadFile(path);
  if (!content.ok()) return "";
  std::vector<std::string> lines = absl::StrSplit(*content, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  const size_t keep = std::min(lines.size(), static_cast<size_t>(std::max(max_lines, 0)));
  return absl::StrJoin(lines.end() - static_cast<std::ptrdiff_t>(keep), lines.end(), "\n");
}

std::optional<std::string> FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::vector<std::string> dirs =
      absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':');
  for (const std::string& dir : dirs) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name);
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

absl::StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                         const ProcessOptions& options,
                                         std::chrono::milliseconds timeout) {
  auto plan = Plan(argv, options);
  if (!plan.ok()) return plan.status();
  // Output goes to an unlinked file rather than a pipe: a daemon the command
  // leaves behind (pg_ctl start) may inherit the descriptor, and reading a pipe
  // to its end would then wait for the daemon.
  std::string tmpl = absl::StrCat(TempRoot(), "/perfgate-cmd-XXXXXX");
  const int out_fd = mkostemp(tmpl.data(), O_CLOEXEC);
  if (out_fd < 0) return ErrnoStatus("mkostemp", errno);
  unlink(tmpl.c_str());

  auto pid = Spawn(*plan, out_fd);
  if (!pid.ok()) {
    close(out_fd);
    return pid.status();
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t r = waitpid(*pid, &status, WNOHANG);
    if (r == *pid) break;
    if (r < 0 && errno != EINTR) {
      close(out_fd);
      return ErrnoStatus("waitpid", errno);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(*pid, SIGKILL);
      while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
      }
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(kPollInterval);
  }

  CommandResult result;
  result.exit_code = ExitCodeOf(status);
  lseek(out_fd, 0, SEEK_SET);
  char buf[8192];
  ssize_t n;
  while ((n = read(out_fd, buf, sizeof(buf))) > 0)
    result.output.append(buf, static_cast<size_t>(n));
  close(out_fd);
  if (timed_out) {
    return absl::DeadlineExceededError(absl::StrCat("'", absl::StrJoin(argv, " "),
                                                    "' did not finish within ", timeout.count(),
                                                    " ms; its output:\n", result.output));
  }
  return result;
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(
    const std::vector<std::string>& argv, const std::string& output_path,
    const ProcessOptions& options) {
  auto plan = Plan(argv, options);
  if (!plan.ok()) return plan.status();
  plan->kill_with_parent = SIGKILL;
  const int out_fd = open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0) return ErrnoStatus(absl::StrCat("cannot create ", output_path), errno);
  auto pid = Spawn(*plan, out_fd);
  close(out_fd);
  if (!pid.ok()) return pid.status();
  return std::unique_ptr<ChildProcess>(new ChildProcess(*pid, output_path));
}

ChildProcess::~ChildProcess() {
  if (!exit_code_) Kill();
}

bool ChildProcess::Reap(bool block) {
  if (exit_code_) return true;
  int status = 0;
  for (;;) {
    const pid_t r = waitpid(pid_, &status, block ? 0 : WNOHANG);
    if (r == pid_) {
      exit_code_ = ExitCodeOf(status);
      return true;
    }
    if (r == 0) return false;
    if (errno == EINTR) continue;
    // ECHILD: reaped elsewhere; nothing is left to wait for.
    exit_code_ = -1;
    return true;
  }
}

bool ChildProcess::Running() { return !Reap(/*block=*/false); }

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!Reap(/*block=*/false)) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(kPollInterval);
  }
  return exit_code_;
}

int ChildProcess::Stop(int sig, std::chrono::milliseconds grace) {
  if (Reap(/*block=*/false)) return *exit_code_;
  kill(pid_, sig);
  if (auto code = Wait(grace)) return *code;
  kill(pid_, SIGKILL);
  Reap(/*block=*/true);
  return *exit_code_;
}

std::string ChildProcess::Output() const {
  auto content = ReadFile(output_path_);
  return content.ok() ? *content : std::string();
}

bool ChildProcess::WaitForLine(const std::string& substring, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  size_t scanned = 0;  // bytes of complete lines already looked at
  for (;;) {
    // Read the exit state before the file: output written before exiting is
    // then certainly in the file when we look.
    const bool exited = Reap(/*block=*/false);
    const std::string out = Output();
    size_t start = scanned;
    for (;;) {
      const size_t nl = out.find('\n', start);
      const std::string_view line(out.data() + start,
                                  (nl == std::string::npos ? out.size() : nl) - start);
      if (line.find(substring) != std::string_view::npos) return true;
      if (nl == std::string::npos) break;
      start = nl + 1;
      scanned = start;
    }
    if (exited || std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(kPollInterval);
  }
}

std::string Bin(const std::string& relative) {
  const char* dir = std::getenv("PERFGATE_BIN_DIR");
  return std::string(dir != nullptr ? dir : ".") + "/" + relative;
}

}  // namespace perfgate::testing
