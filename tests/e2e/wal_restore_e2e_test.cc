// Backup and recovery as docs/operations.md describes it: the coordinator's
// database with WAL archiving on (archive_mode, an archive_command that
// never overwrites a segment), a pg_basebackup taken while it runs, more
// runs stored after it, then the backup copied into a new data directory
// with recovery.signal and a restore_command reading the archive: the
// restored server holds every run and every sample, the later ones replayed
// from the archived WAL.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <pqxx/pqxx>
#include <string>
#include <tuple>
#include <vector>

#include "tests/e2e/dashboard_seed.h"
#include "tests/e2e/stored_runs.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::wal_restore_e2e_test {
namespace {

using testing::Bin;
using Clock = std::chrono::steady_clock;

constexpr char kToken[] = "restore-token";

// Per run: its status, how many samples it holds and their sum.
using StoredContents = std::map<std::string, std::tuple<std::string, int64_t, double>>;

StoredContents ReadContents(const std::string& conninfo) {
  pqxx::connection c(conninfo);
  pqxx::read_transaction txn(c);
  StoredContents out;
  for (const auto& row : txn.exec(
           "SELECT r.id, r.status, count(s.value), coalesce(sum(s.value), 0) FROM runs r "
           "LEFT JOIN samples s ON s.run_id = r.id GROUP BY r.id, r.status")) {
    out[row[0].as<std::string>()] = {row[1].as<std::string>(), row[2].as<int64_t>(), row[3].as<double>()};
  }
  return out;
}

class WalRestoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto archive = testing::ServerWritableTempDir("perfgate-wal-archive-");
    ASSERT_TRUE(archive.ok()) << archive.status();
    archive_ = std::make_unique<testing::TempDir>(std::move(*archive));
    auto backups = testing::ServerWritableTempDir("perfgate-base-backup-");
    ASSERT_TRUE(backups.ok()) << backups.status();
    backups_ = std::make_unique<testing::TempDir>(std::move(*backups));
    auto dir = testing::TempDir::Create("perfgate-WalRestoreTest-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<testing::TempDir>(std::move(*dir));
    token_file_ = dir_->Join("token");
    std::ofstream(token_file_) << kToken << "\n";

    const std::string segment = archive_->Join("%f");
    auto primary = testing::PostgresServer::Start(
        {"archive_mode=on", "archive_command=test ! -f " + segment + " && cp %p " + segment});
    ASSERT_TRUE(primary.ok()) << primary.status();
    primary_ = std::move(*primary);
    auto started = testing::StartDashboardCoordinator(primary_->ConnInfo(), dir_->Join("coordinator.log"), token_file_);
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(*started);
  }

  // One quick agent run, waited for: exit 0; `commit` names its files.
  void Measure(const std::string& commit) {
    const std::string own = dir_->Join(commit);
    auto r = testing::RunCommand({Bin("agent/perfgate-agent"), "run", "--coordinator", coordinator_.grpc.address,
                                  "--token-file", token_file_, "--branch", "main", "--commit", commit, "--trigger",
                                  "ci", "--output", own + "-results.json", "--run-id-file", own + "-run-id",
                                  "--spool", dir_->Join("spool"), "--filter", "kernels/copy*", "--set",
                                  "bytes=65536", "--min-time", "0.05"});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->exit_code, 0) << r->output;
    auto id = testing::ReadFile(own + "-run-id");
    ASSERT_TRUE(id.ok()) << id.status();
    runs_.emplace_back(id->substr(0, 36), own + "-results.json");
  }

  // Closes the current WAL segment and waits until the archiver has copied
  // it: everything committed so far is then in the archive.
  void ArchiveCurrentWal() {
    pqxx::connection c(primary_->ConnInfo());
    const auto segment = pqxx::nontransaction(c).exec1("SELECT pg_walfile_name(pg_switch_wal())")[0].as<std::string>();
    std::string archived;
    for (const auto deadline = Clock::now() + std::chrono::seconds(30);
         archived < segment && Clock::now() < deadline;) {
      pqxx::nontransaction txn(c);
      archived = txn.exec1("SELECT coalesce(last_archived_wal, '') FROM pg_stat_archiver")[0].as<std::string>();
      // Waiting on the coordinator wakes as soon as it dies.
      if (archived < segment) coordinator_.grpc.process->Wait(std::chrono::milliseconds(50));
    }
    ASSERT_GE(archived, segment) << primary_->LogTail();
  }

  std::unique_ptr<testing::TempDir> archive_, backups_, dir_;
  std::string token_file_;
  std::unique_ptr<testing::PostgresServer> primary_;
  testing::DashboardCoordinator coordinator_;
  std::vector<std::pair<std::string, std::string>> runs_;  // run id, result file
};

TEST_F(WalRestoreTest, ABaseBackupPlusArchivedWalRestoresEveryRunAndSample) {
  ASSERT_NO_FATAL_FAILURE(Measure("before-backup"));
  const std::string backup = backups_->Join("base");
  ASSERT_TRUE(primary_->BaseBackup(backup).ok()) << primary_->LogTail();
  // Only the archived WAL holds these two.
  ASSERT_NO_FATAL_FAILURE(Measure("after-backup-1"));
  ASSERT_NO_FATAL_FAILURE(Measure("after-backup-2"));
  ASSERT_NO_FATAL_FAILURE(ArchiveCurrentWal());
  const StoredContents stored = ReadContents(primary_->ConnInfo());
  ASSERT_EQ(stored.size(), 3u);
  primary_->Stop();

  auto restored = testing::PostgresServer::Restore(backup, {"restore_command=cp " + archive_->Join("%f") + " %p"});
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(ReadContents((*restored)->ConnInfo()), stored);
  pqxx::connection c((*restored)->ConnInfo());
  pqxx::read_transaction txn(c);
  for (const auto& [run_id, results] : runs_) testing::ExpectRunStoredAsFiled(txn, run_id, results);
}

}  // namespace
}  // namespace perfgate::wal_restore_e2e_test
