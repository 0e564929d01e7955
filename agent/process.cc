#include "agent/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace perfgate::agent {

absl::StatusOr<std::pair<int, std::string>> CaptureOutput(const std::vector<std::string>& argv, bool quiet) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  if (quiet) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start '", argv[0], "': ", std::strerror(rc)));
  }
  std::string out;
  char buf[65536];
  while (true) {
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return std::make_pair(code, std::move(out));
}

std::string Git(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto ran = CaptureOutput(argv, /*quiet=*/true);
  if (!ran.ok() || ran->first != 0) return "";
  return std::string(absl::StripTrailingAsciiWhitespace(ran->second));
}

}  // namespace perfgate::agent
