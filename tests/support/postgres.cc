#include "tests/support/postgres.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <pqxx/pqxx>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/support/server_user.h"

namespace perfgate::testing {
namespace {

constexpr auto kReadyTimeout = std::chrono::seconds(60);
constexpr auto kShutdownGrace = std::chrono::seconds(30);
// A primary ends it "connections", a standby "read-only connections".
constexpr const char* kReadyLine = "database system is ready to accept";
constexpr const char* kInstallHint =
    "install the postgresql package (Debian/Ubuntu: apt-get install postgresql), or point "
    "PERFGATE_POSTGRES_BIN at the directory holding initdb and postgres";

bool IsExecutable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && access(p.c_str(), X_OK) == 0;
}

bool HasServerBinaries(const std::filesystem::path& dir) {
  return IsExecutable(dir / "initdb") && IsExecutable(dir / "postgres");
}

// "12" < "15" < "100": compares directory names numerically where they are numbers.
bool NewerVersion(const std::filesystem::path& a, const std::filesystem::path& b) {
  const std::string va = a.parent_path().filename(), vb = b.parent_path().filename();
  const int na = std::atoi(va.c_str()), nb = std::atoi(vb.c_str());
  return na != nb ? na > nb : va > vb;
}

}  // namespace

std::vector<std::string> TestServerSettings() {
  return {"listen_addresses=127.0.0.1", "fsync=off",          "synchronous_commit=off", "full_page_writes=off",
          "shared_buffers=32MB",        "max_connections=60", "lc_messages=C"};
}

absl::StatusOr<std::string> FindPostgresBinDir() {
  if (const char* env = std::getenv("PERFGATE_POSTGRES_BIN"); env != nullptr && *env != '\0') {
    if (HasServerBinaries(env)) return std::string(env);
    return absl::FailedPreconditionError(absl::StrCat(
        "PERFGATE_POSTGRES_BIN=", env, " does not contain initdb and postgres; ", kInstallHint));
  }
  std::vector<std::string> looked = {"PATH"};
  if (auto initdb = FindInPath("initdb")) {
    // Debian links initdb into PATH but not postgres: follow the link to the
    // versioned directory that has both.
    std::error_code ec;
    const auto real = std::filesystem::canonical(*initdb, ec);
    if (!ec && HasServerBinaries(real.parent_path())) return real.parent_path().string();
  }
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const auto bin = entry.path() / "bin";
    if (HasServerBinaries(bin)) candidates.push_back(bin);
  }
  looked.push_back("/usr/lib/postgresql/*/bin");
  if (candidates.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("PostgreSQL server binaries (initdb, postgres) were not found in ",
                     absl::StrJoin(looked, " or "), "; ", kInstallHint));
  }
  std::sort(candidates.begin(), candidates.end(), NewerVersion);
  return candidates.front().string();
}

// A server object over a fresh temporary directory that the server's OS
// user owns (postgres when called as root); nothing started yet.
absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Prepare() {
  auto bin_dir = FindPostgresBinDir();
  if (!bin_dir.ok()) return bin_dir.status();
  auto dir = ServerWritableTempDir("perfgate-pg-");
  if (!dir.ok()) return dir.status();
  std::unique_ptr<PostgresServer> server(new PostgresServer(std::move(*dir), *bin_dir));
  if (geteuid() == 0) server->user_ = "postgres";
  return server;
}

absl::Status GiveToServerUser(const std::string& path) {
  if (geteuid() != 0) return absl::OkStatus();
  const passwd* pw = getpwnam("postgres");
  if (pw == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "running as root, but there is no 'postgres' user to run the server as (PostgreSQL "
        "refuses to run as root); ",
        kInstallHint, ", or run the tests as a non-root user"));
  }
  if (chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
    return absl::InternalError(absl::StrCat("cannot chown ", path, " to postgres"));
  }
  return absl::OkStatus();
}

absl::StatusOr<TempDir> ServerWritableTempDir(const std::string& prefix) {
  auto dir = TempDir::Create(prefix);
  if (!dir.ok()) return dir;
  if (absl::Status s = GiveToServerUser(dir->path()); !s.ok()) return s;
  return dir;
}

// Runs one of the server's tools (initdb, pg_basebackup, pg_ctl) as the
// server's OS user; an error with its output when it fails.
absl::Status PostgresServer::RunTool(const std::vector<std::string>& argv) const {
  ProcessOptions opts;
  opts.user = user_;
  opts.working_dir = root_;
  opts.env["LC_ALL"] = "C";
  opts.env["PGCONNECT_TIMEOUT"] = "10";
  auto r = RunCommand(argv, opts);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat(argv[0], " failed with exit code ", r->exit_code, ":\n", r->output));
  }
  return absl::OkStatus();
}

// Launches a prepared server, retrying when its free port was taken meanwhile.
absl::Status PostgresServer::LaunchOnFreePort() {
  return LaunchRetryingTakenPorts([this] { return Launch(); });
}

// The cluster every server of these binaries starts from: initdb's output,
// made once and renamed into place whole (a test running beside sees all of
// it or none), named by the server binary and the OS user. A test copies it
// in about 0.3 s instead of running initdb (2-3 s on a two-core machine).
absl::StatusOr<std::string> PostgresServer::Template() const {
  std::error_code ec;
  const auto built = std::filesystem::last_write_time(bin_dir_ + "/postgres", ec).time_since_epoch().count();
  const std::string key =
      absl::StrCat(std::hash<std::string>{}(bin_dir_), "-", static_cast<uint64_t>(built), "-", geteuid());
  const std::string path = (std::filesystem::temp_directory_path() / ("perfgate-pg-template-" + key)).string();
  if (std::filesystem::exists(path + "/data/PG_VERSION", ec)) return path;
  auto fresh = ServerWritableTempDir("perfgate-pg-template-new-");
  if (!fresh.ok()) return fresh.status();
  if (absl::Status s = RunTool({bin_dir_ + "/initdb", "-D", fresh->Join("data"), "-A", "trust", "-U", kUser, "-E",
                                "UTF8", "--no-locale", "--no-sync"});
      !s.ok()) {
    return s;
  }
  // Another test may have put one in place meanwhile: theirs is as good.
  std::filesystem::rename(fresh->path(), path, ec);
  if (!std::filesystem::exists(path + "/data/PG_VERSION")) {
    return absl::InternalError(absl::StrCat("cannot put the initdb template at ", path, ": ", ec.message()));
  }
  return path;
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Start(const std::vector<std::string>& settings) {
  auto server = Prepare();
  if (!server.ok()) return server.status();
  (*server)->settings_ = settings;
  auto from = (*server)->Template();
  if (!from.ok()) return from.status();
  // As the server's user, so that it owns the copy; cp -a keeps the modes
  // PostgreSQL insists on (0700).
  if (absl::Status s = (*server)->RunTool({"cp", "-a", *from + "/data", (*server)->Join("data")}); !s.ok()) {
    return s;
  }
  if (absl::Status s = (*server)->LaunchOnFreePort(); !s.ok()) return s;
  if (absl::Status s = (*server)->CreateDatabase(kDatabase); !s.ok()) return s;
  return server;
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::StartStandby(const PostgresServer& primary) {
  auto server = Prepare();
  if (!server.ok()) return server.status();
  // -R: standby.signal and primary_conninfo.
  if (absl::Status s = primary.BaseBackup((*server)->Join("data"), {"-R"}); !s.ok()) return s;
  if (absl::Status s = (*server)->LaunchOnFreePort(); !s.ok()) return s;
  return server;
}

// -X stream: the WAL of the copy's own span comes with it; a fast
// checkpoint, not one spread over minutes.
absl::Status PostgresServer::BaseBackup(const std::string& dest, const std::vector<std::string>& extra) const {
  std::vector<std::string> argv = {bin_dir_ + "/pg_basebackup", "-h", "127.0.0.1", "-p", std::to_string(port_),
                                   "-U", kUser, "-D", dest, "-X", "stream", "--checkpoint=fast", "--no-sync"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return RunTool(argv);
}

absl::StatusOr<std::unique_ptr<PostgresServer>> PostgresServer::Restore(const std::string& backup,
                                                                        const std::vector<std::string>& settings) {
  auto server = Prepare();
  if (!server.ok()) return server.status();
  const std::string data = (*server)->Join("data");
  // As the server's user, so that it owns the copy; cp -a keeps the modes
  // PostgreSQL insists on (0700).
  if (absl::Status s = (*server)->RunTool({"cp", "-a", backup, data}); !s.ok()) return s;
  if (absl::Status s = (*server)->RunTool({"touch", data + "/recovery.signal"}); !s.ok()) return s;
  // Without hot standby the server reports ready only once recovery has
  // ended, so Launch returns with everything replayed.
  (*server)->settings_ = settings;
  (*server)->settings_.push_back("hot_standby=off");
  if (absl::Status s = (*server)->LaunchOnFreePort(); !s.ok()) return s;
  return server;
}

absl::Status PostgresServer::Promote() {
  return RunTool({bin_dir_ + "/pg_ctl", "promote", "-w", "-t", "60", "-D", Join("data")});
}

// Starts the server on `port` (0: a fresh one). UNAVAILABLE when the port was
// taken in the meantime (the caller retries), another error with the log otherwise.
absl::Status PostgresServer::Launch(int port) {
  if (port == 0) {
    auto free = FreeTcpPort();
    if (!free.ok()) return free.status();
    port = *free;
  }
  port_ = port;
  const std::string log = Join("server.log");
  ProcessOptions opts;
  opts.user = user_;
  opts.working_dir = root_;
  opts.env["LC_ALL"] = "C";
  std::vector<std::string> argv = {bin_dir_ + "/postgres", "-D", Join("data"), "-p", std::to_string(port_),
                                   "-k", root_};
  for (const std::string& setting : TestServerSettings()) argv.insert(argv.end(), {"-c", setting});
  for (const std::string& setting : settings_) argv.insert(argv.end(), {"-c", setting});
  auto process = ChildProcess::Start(argv, log, opts);
  if (!process.ok()) return process.status();
  process_ = std::move(*process);
  if (process_->WaitForLine(kReadyLine, kReadyTimeout)) return absl::OkStatus();

  const std::string output = process_->Output();
  const bool port_taken = absl::StrContains(output, "could not bind") ||
                          absl::StrContains(output, "Address already in use");
  process_->Stop(SIGQUIT, kShutdownGrace);
  process_.reset();
  const std::string why =
      absl::StrCat("PostgreSQL (", bin_dir_, "/postgres) did not become ready on port ", port_,
                   "; the end of its log:\n", FileTail(log, 40));
  return port_taken ? absl::UnavailableError(why) : absl::InternalError(why);
}

PostgresServer::~PostgresServer() {
  if (attached_) {
    DropCreatedDatabases();
  } else {
    Stop();
  }
}

void PostgresServer::Stop() {
  if (attached_) {
    ADD_FAILURE() << "a test stopped the server shared by the whole test run (" << root_
                  << "): give its test binary a server of its own (leave SHARED_POSTGRES off its "
                     "perfgate_test in tests/CMakeLists.txt)";
    return;
  }
  if (process_ == nullptr) return;
  // SIGINT is PostgreSQL's fast shutdown: it does not wait for clients to
  // disconnect as SIGTERM (smart shutdown) would.
  process_->Stop(SIGINT, kShutdownGrace);
}

absl::Status PostgresServer::StartAgain() {
  if (attached_) return absl::FailedPreconditionError("the shared server cannot be restarted by one test");
  Stop();
  process_.reset();
  return Launch(port_);
}

std::string PostgresServer::ConnInfo(const std::string& dbname) const {
  return absl::StrCat("host=127.0.0.1 port=", port_, " user=", kUser, " dbname=", dbname,
                      " connect_timeout=10");
}

absl::Status PostgresServer::CreateDatabase(const std::string& name) {
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      })) {
    return absl::InvalidArgumentError(absl::StrCat("bad database name '", name, "'"));
  }
  const std::string createdb = bin_dir_ + "/createdb";
  ProcessOptions opts;
  opts.env["PGCONNECT_TIMEOUT"] = "10";
  auto r = RunCommand({createdb, "-h", "127.0.0.1", "-p", std::to_string(port_), "-U", kUser, name},
                      opts);
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::InternalError(absl::StrCat("createdb ", name, " failed (exit ", r->exit_code,
                                            "): ", r->output, "\nserver log:\n", LogTail()));
  }
  if (attached_) created_.push_back(name);
  return absl::OkStatus();
}

std::string PostgresServer::LogTail(int max_lines) const {
  return FileTail(Join("server.log"), max_lines);
}

absl::StatusOr<PostgresServer*> SharedPostgresServer() {
  // Owned by a static so that the exit handlers of a test process that ends
  // normally (failed assertions included) stop the server; a crash leaves it
  // to PR_SET_PDEATHSIG.
  static std::unique_ptr<PostgresServer> server;
  static std::optional<absl::Status> failure;
  if (failure) return *failure;
  if (server != nullptr && !server->Running()) {
    return absl::InternalError(absl::StrCat(
        "the shared PostgreSQL server has stopped; the end of its log:\n", server->LogTail()));
  }
  if (server == nullptr) {
    const char* shared = std::getenv("PERFGATE_SHARED_POSTGRES");
    auto started = shared != nullptr && *shared != '\0' ? PostgresServer::Attach(shared) : PostgresServer::Start();
    if (!started.ok()) {
      failure = started.status();
      return *failure;
    }
    server = std::move(*started);
  }
  return server.get();
}

void PostgresTest::SetUp() {
  auto server = SharedPostgresServer();
  ASSERT_TRUE(server.ok()) << "cannot start a PostgreSQL server for this test: "
                           << server.status().message();
  server_ = *server;
  static std::atomic<int> databases{0};
  database_ = absl::StrCat("test_", getpid(), "_", ++databases);
  const absl::Status created = server_->CreateDatabase(database_);
  ASSERT_TRUE(created.ok()) << created.message();
  conninfo_ = server_->ConnInfo(database_);
}

absl::StatusOr<std::string> PostgresTest::CreateReadOnlyRole() {
  if (const char* shared = std::getenv("PERFGATE_SHARED_POSTGRES"); shared != nullptr && *shared != '\0') {
    return absl::FailedPreconditionError(
        "a role belongs to the server, not to a database: a test that makes one needs a server of its own "
        "(leave SHARED_POSTGRES off its perfgate_test in tests/CMakeLists.txt)");
  }
  try {
    pqxx::connection conn(conninfo_);
    pqxx::work txn(conn);
    txn.exec("CREATE ROLE perfgate_read LOGIN");
    txn.exec("GRANT CONNECT ON DATABASE " + txn.quote_name(conn.dbname()) + " TO perfgate_read");
    txn.exec("GRANT USAGE ON SCHEMA public TO perfgate_read");
    txn.exec("GRANT SELECT ON ALL TABLES IN SCHEMA public TO perfgate_read");
    txn.exec("REVOKE SELECT ON credentials FROM perfgate_read");
    txn.commit();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("creating perfgate_read: ", e.what()));
  }
  std::string readonly = conninfo_;
  const std::string user = absl::StrCat("user=", PostgresServer::kUser);
  const size_t at = readonly.find(user);
  if (at == std::string::npos) return absl::InternalError(absl::StrCat("no '", user, "' in ", readonly));
  readonly.replace(at, user.size(), "user=perfgate_read");
  return readonly;
}

std::string PostgresDirTest::WriteTokenFile(const std::string& token) const {
  const std::string path = dir_->Join("token");
  std::ofstream(path) << token << "\n";
  return path;
}

void PostgresDirTest::SetUp() {
  PostgresTest::SetUp();
  if (HasFatalFailure()) return;
  const std::string suite = ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name();
  auto dir = TempDir::Create("perfgate-" + suite + "-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  dir_ = std::make_unique<TempDir>(std::move(*dir));
}

}  // namespace perfgate::testing
