// The PostgreSQL server one test run shares (the ctest fixture
// `shared_postgres`): started detached by pg_ctl, so that it outlives the
// fixture's process, and attached to by each test process, which makes and
// drops its own databases there. Starting a server costs a test about
// 0.6-1 s on a two-core machine; a database about 0.1 s.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "tests/support/postgres.h"
#include "tests/support/server_user.h"

namespace perfgate::testing {
namespace {

// The folder of one ctest run's server in the fixture's folder: this prefix
// and ctest's pid.
constexpr const char* kRunPrefix = "ctest-";

// Two tests at once, each with a coordinator's pool or two, and the clients
// they start.
constexpr const char* kSharedConnections = "max_connections=200";

// The postmaster's pid from `data`/postmaster.pid; 0 when there is none.
pid_t PostmasterPid(const std::string& data) {
  std::ifstream in(data + "/postmaster.pid");
  std::string line;
  int pid = 0;
  if (!std::getline(in, line) || !absl::SimpleAtoi(line, &pid) || pid <= 0) return 0;
  return pid;
}

bool Alive(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// Whether the ctest run of `pid` still goes: a process that ended but that
// its parent has not yet waited for (a zombie, state Z) does not.
bool RunGoesOn(pid_t pid) {
  if (!Alive(pid)) return false;
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat;
  std::getline(in, stat);
  const size_t name_end = stat.rfind(')');
  return name_end == std::string::npos || name_end + 2 >= stat.size() || stat[name_end + 2] != 'Z';
}

// `dir` created (and its parents), owned by the server's OS user.
absl::Status MakeServerDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  return GiveToServerUser(dir);
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Detached(const std::string& dir, int port) {
  auto bin_dir = FindPostgresBinDir();
  if (!bin_dir.ok()) return bin_dir.status();
  std::unique_ptr<PostgresServer> server(new PostgresServer(dir, *bin_dir, port));
  if (geteuid() == 0) server->user_ = "postgres";
  return server;
}

bool PostgresServer::Running() {
  if (attached_) return Alive(PostmasterPid(Join("data")));
  return process_ != nullptr && process_->Running();
}

std::string PostgresServer::RunFolder(const std::string& base) {
  return absl::StrCat(base, "/", kRunPrefix, getppid());
}

absl::Status PostgresServer::StartDetached(const std::string& base) {
  if (absl::Status s = StopServersOfEndedRuns(base); !s.ok()) return s;
  const std::string dir = RunFolder(base);
  if (absl::Status s = StopServerIn(dir); !s.ok()) return s;
  if (absl::Status s = MakeServerDir(dir); !s.ok()) return s;
  auto server = Detached(dir, 0);
  if (!server.ok()) return server.status();
  auto from = (*server)->Template();
  if (!from.ok()) return from.status();
  if (absl::Status s = (*server)->RunTool({"cp", "-a", *from + "/data", (*server)->Join("data")}); !s.ok()) return s;
  {
    std::ofstream conf((*server)->Join("data/postgresql.conf"), std::ios::app);
    conf << "\n# the shared test server\n";
    std::vector<std::string> settings = TestServerSettings();
    settings.push_back(kSharedConnections);
    settings.push_back("unix_socket_directories=" + dir);
    // Quoted: a value such as 127.0.0.1 is no token of the file's syntax.
    for (const std::string& setting : settings) {
      const size_t eq = setting.find('=');
      conf << setting.substr(0, eq) << " = '" << setting.substr(eq + 1) << "'\n";
    }
    if (!conf) return absl::InternalError(absl::StrCat("cannot write ", dir, "/data/postgresql.conf"));
  }
  if (absl::Status s = LaunchRetryingTakenPorts([&] { return (*server)->LaunchDetached(); }); !s.ok()) return s;
  if (absl::Status s = (*server)->CreateDatabase(kDatabase); !s.ok()) return s;
  (*server)->created_.clear();  // stays with the server
  // Last, and whole: a test that finds the file finds a server ready.
  const std::string port_file = (*server)->Join("port");
  std::ofstream(port_file + ".new") << (*server)->port_ << "\n";
  std::error_code ec;
  std::filesystem::rename(port_file + ".new", port_file, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot write ", port_file, ": ", ec.message()));
  return absl::OkStatus();
}

// pg_ctl start on a free port (written to postgresql.auto.conf, read after
// postgresql.conf); UNAVAILABLE when the port was taken meanwhile.
absl::Status PostgresServer::LaunchDetached() {
  auto free = FreeTcpPort();
  if (!free.ok()) return free.status();
  port_ = *free;
  std::ofstream(Join("data/postgresql.auto.conf"), std::ios::trunc) << "port = " << port_ << "\n";
  const absl::Status started =
      RunTool({bin_dir_ + "/pg_ctl", "start", "-w", "-t", "60", "-D", Join("data"), "-l", Join("server.log")});
  if (started.ok()) return started;
  const std::string log = LogTail();
  const std::string why = absl::StrCat(started.message(), "\nthe end of the server's log:\n", log);
  const bool port_taken = absl::StrContains(log, "could not bind") || absl::StrContains(log, "Address already in use");
  return port_taken ? absl::UnavailableError(why) : absl::InternalError(why);
}

absl::Status PostgresServer::StopDetached(const std::string& base) {
  if (absl::Status s = StopServerIn(RunFolder(base)); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::remove(base, ec);  // the last run's: an empty folder goes too
  return absl::OkStatus();
}

absl::Status PostgresServer::StopServersOfEndedRuns(const std::string& base) {
  std::error_code ec;
  std::vector<std::string> ended;
  for (const auto& entry : std::filesystem::directory_iterator(base, ec)) {
    const std::string name = entry.path().filename().string();
    int run = 0;
    if (!absl::StartsWith(name, kRunPrefix) || !absl::SimpleAtoi(name.substr(strlen(kRunPrefix)), &run)) continue;
    if (!RunGoesOn(run) || !Alive(PostmasterPid(entry.path().string() + "/data"))) ended.push_back(entry.path().string());
  }
  for (const std::string& dir : ended) {
    if (absl::Status s = StopServerIn(dir); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status PostgresServer::StopServerIn(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return absl::OkStatus();
  if (Alive(PostmasterPid(dir + "/data"))) {
    auto server = Detached(dir, 0);
    if (!server.ok()) return server.status();
    if (absl::Status s = (*server)->RunTool({(*server)->bin_dir_ + "/pg_ctl", "stop", "-w", "-t", "60", "-m", "fast",
                                             "-D", (*server)->Join("data")});
        !s.ok()) {
      return s;
    }
  }
  return RemoveTree(dir);
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Attach(const std::string& base) {
  const std::string dir = RunFolder(base);
  const auto text = ReadFile(dir + "/port");
  int port = 0;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &port) || port <= 0 ||
      !Alive(PostmasterPid(dir + "/data"))) {
    return absl::FailedPreconditionError(absl::StrCat(
        "PERFGATE_SHARED_POSTGRES=", base, " holds no running server for this run (", dir,
        "): ctest starts it (the fixture shared_postgres, test SharedPostgres.Start); "
        "run this test through ctest, or unset the variable to give the test a server of its own"));
  }
  return Detached(dir, port);
}

void PostgresServer::DropCreatedDatabases() {
  ProcessOptions opts;
  opts.env["PGCONNECT_TIMEOUT"] = "10";
  for (const std::string& name : created_) {
    // --force: a client the test left connected (a coordinator still
    // closing) is disconnected rather than keeping the database.
    (void)RunCommand({bin_dir_ + "/dropdb", "--force", "--if-exists", "-h", "127.0.0.1", "-p",
                      std::to_string(port_), "-U", kUser, name},
                     opts);
  }
  created_.clear();
}

}  // namespace perfgate::testing
