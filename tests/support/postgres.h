// A throw-away PostgreSQL server for tests labelled `db` and `e2e`: a copy of
// a cluster that initdb made once (kept in the temporary directory as
// perfgate-pg-template-*, one per server build and OS user, and shared by
// every test), the server on a free port of 127.0.0.1 with fsync off, trust
// authentication for the superuser "perfgate". Under ctest, the binaries
// that ask for it share one such server for the whole run (the fixture
// shared_postgres), each test in a database of its own; the others start
// one per test process. Never skipped: when the server binaries are missing
// the test fails and says to install the postgresql package.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/support/processes.h"

namespace perfgate::testing {

/// One running PostgreSQL server, stopped and deleted with the object.
class PostgresServer {
 public:
  /// Superuser that initdb creates; connections need no password.
  static constexpr const char* kUser = "perfgate";
  /// Database created at start.
  static constexpr const char* kDatabase = "perfgate";

  /// Runs initdb and starts the server (as user postgres when called as root,
  /// since PostgreSQL refuses to run as root). The error of a failed start
  /// carries the tail of the server's log.
  /// `settings` ("name=value", each passed as -c) come after the test
  /// defaults and override them (e.g. archive_mode=on).
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Start(const std::vector<std::string>& settings = {});
  /// A streaming-replication standby of `primary` (pg_basebackup -R of
  /// it), started on a free port: it serves reads and follows the primary
  /// until Promote().
  static absl::StatusOr<std::unique_ptr<PostgresServer>> StartStandby(const PostgresServer& primary);
  /// Archive recovery of a base backup (BaseBackup's directory, copied, not
  /// moved): recovery.signal in the copy and the server started with
  /// `settings` (restore_command among them); returns once it has replayed
  /// every WAL segment restore_command finds and takes writes.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Restore(const std::string& backup,
                                                                 const std::vector<std::string>& settings);
  /// A server that outlives this process, for the ctest fixture
  /// `shared_postgres` (tests/support/shared_postgres_main.cc), in a folder
  /// of `base` of its own for the ctest run that started it (RunFolder):
  /// the template copied there, started by pg_ctl on a free port, which is
  /// written to its `port` file last. Servers that runs no longer alive left
  /// in `base` (an interrupted run) are stopped and their folders removed
  /// first; those of a run still going are left alone.
  static absl::Status StartDetached(const std::string& base);
  /// Stops the server StartDetached left for this ctest run in `base` and
  /// removes its folder; OK when there is none.
  static absl::Status StopDetached(const std::string& base);
  /// The folder of `base` of the ctest run this process belongs to: named
  /// by its parent's pid, which ctest is for the fixture and every test it
  /// starts (and a shell for commands typed at it).
  static std::string RunFolder(const std::string& base);
  /// The server StartDetached left running for this ctest run in `base`,
  /// used and not owned: the
  /// object neither stops it nor removes its files (Stop() and StartAgain()
  /// fail the test), and drops the databases made through it when destroyed.
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Attach(const std::string& base);
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;
  /// Stops the server (fast shutdown) and removes its files.
  ~PostgresServer();

  /// A libpq connection string for dbname: "host=127.0.0.1 port=N user=perfgate dbname=...".
  std::string ConnInfo(const std::string& dbname = kDatabase) const;
  /// Creates an empty database (name: lower-case letters, digits, '_').
  absl::Status CreateDatabase(const std::string& name);
  /// The TCP port the server listens on.
  int port() const { return port_; }
  /// True while the server process is alive.
  bool Running();
  /// Stops the server with a fast shutdown (clients are disconnected). Safe to
  /// call twice; the data directory stays until destruction.
  void Stop();
  /// Starts the stopped server again on the same port and data directory
  /// (an outage ends); the error carries the log.
  absl::Status StartAgain();
  /// pg_basebackup of the running server into the new directory `dest`
  /// (plain format, the WAL of its own span streamed with it).
  /// `extra`: more pg_basebackup options (-R for a standby).
  absl::Status BaseBackup(const std::string& dest, const std::vector<std::string>& extra = {}) const;
  /// pg_ctl promote: a standby becomes a primary that takes writes
  /// (returns once it does).
  absl::Status Promote();
  /// The last lines of the server's log, for failure messages.
  std::string LogTail(int max_lines = 40) const;
  /// Directory holding the server binaries that were used.
  const std::string& bin_dir() const { return bin_dir_; }

 private:
  PostgresServer(TempDir dir, std::string bin_dir)
      : root_(dir.path()), owned_(std::move(dir)), bin_dir_(std::move(bin_dir)) {}
  // A server in `root` that this object does not own (Attach, StartDetached).
  PostgresServer(std::string root, std::string bin_dir, int port)
      : root_(std::move(root)), bin_dir_(std::move(bin_dir)), port_(port), attached_(true) {}
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Detached(const std::string& dir, int port);
  std::string Join(const std::string& name) const { return root_ + "/" + name; }
  absl::Status LaunchDetached();
  // Stops the server in `dir` (if one runs) and removes `dir`.
  static absl::Status StopServerIn(const std::string& dir);
  // StopServerIn for each run's folder in `base` whose ctest or server has ended.
  static absl::Status StopServersOfEndedRuns(const std::string& base);
  void DropCreatedDatabases();
  static absl::StatusOr<std::unique_ptr<PostgresServer>> Prepare();
  absl::StatusOr<std::string> Template() const;
  absl::Status RunTool(const std::vector<std::string>& argv) const;
  absl::Status Launch(int port = 0);
  absl::Status LaunchOnFreePort();

  std::string root_;             // data directory, socket and log
  std::optional<TempDir> owned_;  // root_ when this object owns it; destroyed after process_
  std::string bin_dir_;
  std::string user_;  // the OS user the server runs as; empty: the current one
  std::vector<std::string> settings_;  // -c options beyond the test defaults
  int port_ = 0;
  bool attached_ = false;
  std::vector<std::string> created_;  // databases to drop when attached_
  std::unique_ptr<ChildProcess> process_;
};

/// The directory of initdb/postgres/createdb: $PERFGATE_POSTGRES_BIN, then the
/// directory of initdb found in PATH, then the newest /usr/lib/postgresql/*/bin.
/// FAILED_PRECONDITION saying to install the postgresql package when none has them.
absl::StatusOr<std::string> FindPostgresBinDir();

/// The settings ("name=value") of every test server: loopback only, no
/// fsync, small buffers, messages in English.
std::vector<std::string> TestServerSettings();

/// A temporary directory the server's OS user may write (postgres when
/// called as root): for a WAL archive or a base backup.
absl::StatusOr<TempDir> ServerWritableTempDir(const std::string& prefix);

/// The server shared by every test of this process: where
/// $PERFGATE_SHARED_POSTGRES names a directory, the server the ctest fixture
/// `shared_postgres` started there for the whole test run (Attach; an error
/// when none runs there); otherwise one started on first use and stopped
/// when the process exits (ctest runs each test in its own process, so that
/// is one server per test). A failed start is remembered and returned to
/// every caller. Call it from the main thread: a server it starts is tied to
/// the thread that starts it and dies with it.
absl::StatusOr<PostgresServer*> SharedPostgresServer();

/// GoogleTest fixture: a fresh, empty database on the process's shared server
/// for each test. SetUp fails the test (it is never skipped) when no server
/// can be started.
class PostgresTest : public ::testing::Test {
 protected:
  void SetUp() override;

  /// libpq connection string of this test's database.
  const std::string& ConnInfo() const { return conninfo_; }
  /// The name of this test's database, unique on the server ("test_PID_N"):
  /// the start of the name of any other database the test makes there.
  const std::string& DatabaseName() const { return database_; }
  /// Creates the read-only role of docs/security.md (perfgate_read: SELECT on every
  /// table but credentials; a role is the server's: refused on the shared one) in
  /// this test's migrated database; its connection string.
  absl::StatusOr<std::string> CreateReadOnlyRole();
  /// The server behind it.
  PostgresServer& server() { return *server_; }

 private:
  PostgresServer* server_ = nullptr;
  std::string database_;
  std::string conninfo_;
};

/// PostgresTest plus a temporary directory of the test's own (named after its
/// suite) for the logs, policies and tokens an end-to-end test writes;
/// removed with the fixture.
class PostgresDirTest : public PostgresTest {
 protected:
  void SetUp() override;
  /// Writes `token` (and a newline) to the file "token" in dir_; its path.
  std::string WriteTokenFile(const std::string& token) const;

  std::unique_ptr<TempDir> dir_;
};

}  // namespace perfgate::testing
