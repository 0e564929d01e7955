// The run's shared server (the ctest fixture shared_postgres) keeps a folder
// per ctest run: a second run started beside the first keeps the first's
// server running, and a server whose run ended is stopped by the next start
// (label `db`: real PostgreSQL servers, started by pg_ctl).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::testing {
namespace {

// Runs `what` in a child process, whose parent (this process) is then the
// "ctest" its folder is named by; true when it exited 0. `pid`, when given,
// gets the child's pid.
bool InChild(const std::function<bool()>& what, pid_t* pid = nullptr) {
  const pid_t child = fork();
  if (child == 0) _exit(what() ? 0 : 1);
  if (pid != nullptr) *pid = child;
  int status = 0;
  return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool Started(const std::string& base) { return PostgresServer::StartDetached(base).ok(); }

// Whatever servers a failed assertion left in `base` are stopped (SIGQUIT:
// immediate shutdown) when the test ends.
struct StopLeftServers {
  std::string base;
  ~StopLeftServers() {
    std::error_code ec;
    for (const auto& run : std::filesystem::directory_iterator(base, ec)) {
      std::ifstream in(run.path() / "data" / "postmaster.pid");
      pid_t pid = 0;
      if (in >> pid && pid > 0) kill(pid, SIGQUIT);
    }
  }
};

TEST(SharedPostgres, EachRunKeepsItsServerAndAStartStopsTheServersOfEndedRuns) {
  auto dir = TempDir::Create("perfgate-shared-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string base = dir->Join("servers");
  namespace fs = std::filesystem;
  // The servers run as postgres under root: it must reach its folders.
  fs::permissions(dir->path(), fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  StopLeftServers stop_left{base};

  // A run whose ctest (the child's parent, this process) goes on, then one
  // of this process's own parent: both servers answer.
  const std::string ours = base + "/ctest-" + std::to_string(getpid());
  ASSERT_TRUE(InChild([&] { return Started(base); }));
  ASSERT_TRUE(PostgresServer::StartDetached(base).ok());
  auto first = PostgresServer::Attach(base);  // this process's run
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_TRUE(fs::exists(ours + "/port"));
  EXPECT_TRUE(InChild([&] { return PostgresServer::Attach(base).ok(); })) << "the first run's server was stopped";

  // A run that ended: its ctest (a child that started it through a
  // grandchild) is gone. The next start stops its server and removes it.
  pid_t ended = 0;
  ASSERT_TRUE(InChild([&] { return InChild([&] { return Started(base); }); }, &ended));
  const std::string gone = base + "/ctest-" + std::to_string(ended);
  ASSERT_TRUE(fs::exists(gone + "/port"));
  ASSERT_TRUE(InChild([&] { return Started(base); }));
  EXPECT_FALSE(fs::exists(gone)) << "the server of a run that ended was left";
  EXPECT_TRUE(fs::exists(ours + "/port"));

  // Each run stops its own.
  EXPECT_TRUE(InChild([&] { return PostgresServer::StopDetached(base).ok(); }));
  EXPECT_FALSE(fs::exists(ours));
  EXPECT_TRUE(PostgresServer::StopDetached(base).ok());
  EXPECT_FALSE(fs::exists(base)) << "the last run's stop leaves no folder";
}

}  // namespace
}  // namespace perfgate::testing
