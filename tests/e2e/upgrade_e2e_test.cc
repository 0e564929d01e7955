// Upgrades and backups against a database with history in it: the schema
// of migration 0010 (the previous release's) made from the migrations'
// own files and filled with the rows a coordinator of that release stored
// (tests/data/upgrade/schema_0010_history.sql), migrated by today's
// coordinator and gated against; the same history dumped with pg_dump,
// restored into a new PostgreSQL server and gated against there; and a
// coordinator that meets a schema newer than it knows refusing to start.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <utility>
#include <vector>

#include "common/exit_codes.h"
#include "gate/report.h"
#include "tests/support/coordinator.h"
#include "tests/support/gate_reports.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::upgrade_e2e_test {
namespace {

using testing::Bin;
using testing::RunCommand;

// The previous release's newest migration.
constexpr int kPreviousSchema = 10;
// The history's slowed pull request (its copy of 4 MiB is 20 % slower) and
// its clean one.
constexpr char kSlowBranch[] = "pr-slow";
constexpr char kCleanBranch[] = "pr-clean";
constexpr char kSlowedCase[] = "kernels/copy{bytes=4194304}";

std::string SourcePath(const std::string& relative) { return std::string(PERFGATE_SOURCE_DIR) + "/" + relative; }

int VersionOf(const std::filesystem::path& migration) { return std::stoi(migration.filename().string().substr(0, 4)); }

// The migration files of the source tree, in version order.
std::vector<std::filesystem::path> MigrationFiles() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(SourcePath("coordinator/migrations"))) {
    if (e.path().extension() == ".sql") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Creates the schema as the previous release left it: its migration files
// applied in order and recorded as its coordinator records them.
void ApplyPreviousSchema(const std::string& conninfo) {
  std::vector<std::filesystem::path> files = MigrationFiles();
  std::erase_if(files, [](const std::filesystem::path& f) { return VersionOf(f) > kPreviousSchema; });
  ASSERT_EQ(VersionOf(files.back()), kPreviousSchema);
  pqxx::connection c(conninfo);
  pqxx::work txn(c);
  txn.exec("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
           "applied_at timestamptz NOT NULL DEFAULT now())");
  for (const auto& f : files) {
    auto sql = testing::ReadFile(f.string());
    ASSERT_TRUE(sql.ok()) << sql.status();
    txn.exec(*sql);
    txn.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    VersionOf(f), f.stem().string());
  }
  txn.commit();
}

// Loads the rows a coordinator of the previous release stored.
void LoadPreviousHistory(const std::string& conninfo) {
  auto sql = testing::ReadFile(SourcePath("tests/data/upgrade/schema_0010_history.sql"));
  ASSERT_TRUE(sql.ok()) << sql.status();
  pqxx::connection c(conninfo);
  pqxx::work txn(c);
  txn.exec(*sql);
  txn.commit();
}

std::string RunOfBranch(const std::string& conninfo, const std::string& branch) {
  pqxx::connection c(conninfo);
  pqxx::read_transaction txn(c);
  return txn.exec_params1("SELECT id::text FROM runs WHERE branch = $1 ORDER BY started_at, id LIMIT 1", branch)[0]
      .as<std::string>();
}

int64_t Count(const std::string& conninfo, const std::string& query) {
  pqxx::connection c(conninfo);
  pqxx::read_transaction txn(c);
  return txn.exec1(query)[0].as<int64_t>();
}

// A gate's exit code and its verdict on kSlowedCase (none when the report has none).
using GateOutcome = std::pair<int, std::optional<gate::Verdict>>;

class UpgradeTest : public testing::PostgresDirTest {
 protected:
  void SetUp() override {
    testing::PostgresDirTest::SetUp();
    if (HasFatalFailure()) return;
    policy_ = dir_->Join("policy.yaml");
    std::ofstream(policy_) << "version: 1\n";
  }

  // Serves `conninfo` and gates the pull-request branch's run against main;
  // the gate's exit code and its verdict on kSlowedCase.
  GateOutcome Gate(const std::string& conninfo, const std::string& branch) {
    auto coordinator = testing::StartCoordinator(conninfo, dir_->Join("coordinator-" + branch + ".log"));
    EXPECT_TRUE(coordinator.ok()) << coordinator.status();
    if (!coordinator.ok()) return {-1, std::nullopt};
    const std::string json = dir_->Join("gate-" + branch + ".json");
    auto r = RunCommand({Bin("cli/perfgate"), "--coordinator", coordinator->address, "gate", "--run",
                         RunOfBranch(conninfo, branch), "--baseline-branch", "main", "--policy", policy_, "--json",
                         json});
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {-1, std::nullopt};
    auto report = testing::ReadGateReport(json);
    std::optional<gate::Verdict> verdict;
    if (report.ok()) {
      for (const gate::MetricVerdict& v : report->result.verdicts) {
        if (v.benchmark == kSlowedCase) verdict = v.verdict;
      }
    }
    EXPECT_TRUE(verdict.has_value()) << (report.ok() ? "" : report.status().ToString() + "\n") << r->output << "\n"
                                     << coordinator->process->OutputTail();
    return {r->exit_code, verdict};
  }

  // The previous release's schema and history in this test's database, migrated by today's coordinator.
  void UpgradePreviousHistory() {
    ASSERT_NO_FATAL_FAILURE(ApplyPreviousSchema(ConnInfo()));
    ASSERT_NO_FATAL_FAILURE(LoadPreviousHistory(ConnInfo()));
    auto migrated = RunCommand({Bin("coordinator/perfgate-coordinator"), "--database", ConnInfo(), "migrate"});
    ASSERT_TRUE(migrated.ok()) << migrated.status();
    ASSERT_EQ(migrated->exit_code, kExitPass) << migrated->output;
    // Every migration of this release is applied on top.
    EXPECT_EQ(Count(ConnInfo(), "SELECT count(*) FROM schema_migrations"),
              static_cast<int64_t>(MigrationFiles().size()))
        << migrated->output;
    EXPECT_EQ(Count(ConnInfo(), "SELECT max(version) FROM schema_migrations"), VersionOf(MigrationFiles().back()));
  }

  std::string policy_;
};

TEST_F(UpgradeTest, HistoryStoredUnderThePreviousSchemaIsMigratedAndGatedAgainst) {
  ASSERT_NO_FATAL_FAILURE(UpgradePreviousHistory());
  // Nothing of the history was lost on the way.
  EXPECT_EQ(Count(ConnInfo(), "SELECT count(*) FROM runs WHERE branch = 'main' AND status = 'complete'"), 12);
  EXPECT_EQ(Count(ConnInfo(), "SELECT count(*) FROM samples"),
            Count(ConnInfo(), "SELECT sum(sample_count) FROM batches"));
  EXPECT_EQ(Gate(ConnInfo(), kSlowBranch), GateOutcome(kExitRegression, gate::Verdict::kRegression));
  EXPECT_EQ(Gate(ConnInfo(), kCleanBranch), GateOutcome(kExitPass, gate::Verdict::kPass));
}

TEST_F(UpgradeTest, ABackupRestoredIntoANewServerGatesAsTheOriginal) {
  ASSERT_NO_FATAL_FAILURE(UpgradePreviousHistory());
  const std::string bin = server().bin_dir();
  const std::string dump = dir_->Join("perfgate.dump");
  auto dumped = RunCommand({bin + "/pg_dump", "--format=custom", "--file", dump, ConnInfo()});
  ASSERT_TRUE(dumped.ok()) << dumped.status();
  ASSERT_EQ(dumped->exit_code, 0) << dumped->output;
  auto fresh = testing::PostgresServer::Start();
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  const std::string restored = (*fresh)->ConnInfo();
  auto loaded = RunCommand({bin + "/pg_restore", "--no-owner", "--exit-on-error", "--dbname", restored, dump});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->exit_code, 0) << loaded->output;
  for (const char* table : {"runs", "samples", "summaries", "batches", "schema_migrations"}) {
    const std::string q = std::string("SELECT count(*) FROM ") + table;
    EXPECT_EQ(Count(restored, q), Count(ConnInfo(), q)) << table;
  }
  EXPECT_EQ(Gate(restored, kSlowBranch), GateOutcome(kExitRegression, gate::Verdict::kRegression));
  EXPECT_EQ(Gate(restored, kCleanBranch), GateOutcome(kExitPass, gate::Verdict::kPass));
}

TEST_F(UpgradeTest, ACoordinatorOlderThanTheSchemaRefusesToStartAndTouchesNothing) {
  {
    pqxx::connection c(ConnInfo());
    pqxx::work txn(c);
    txn.exec("CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, "
             "applied_at timestamptz NOT NULL DEFAULT now())");
    txn.exec("INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_from_the_future')");
    txn.commit();
  }
  const std::string coordinator = Bin("coordinator/perfgate-coordinator");
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{coordinator, "--database", ConnInfo(), "migrate"},
        std::vector<std::string>{coordinator, "--database", ConnInfo(), "serve", "--listen", "127.0.0.1:0"}}) {
    auto r = RunCommand(argv);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->exit_code, kExitError) << argv[3] << ": " << r->output;
    EXPECT_NE(r->output.find("schema is at version 9999, newer than version"), std::string::npos) << r->output;
  }
  // Not one migration was applied.
  EXPECT_EQ(Count(ConnInfo(), "SELECT count(*) FROM schema_migrations"), 1);
  EXPECT_EQ(Count(ConnInfo(), "SELECT count(*) FROM pg_tables WHERE tablename = 'runs'"), 0);
}

}  // namespace
}  // namespace perfgate::upgrade_e2e_test
