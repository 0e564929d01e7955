// History and series read from series_points (migration 0014): the points
// CloseRun keeps, a time range of one series, and the points of runs closed
// before the migration (label `db`, a private PostgreSQL server).
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/identity.h"
#include "coordinator/store.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/coordinator/migrated_store_test.h"

namespace perfgate::coordinator {
namespace {

using ::testing::ElementsAre;

constexpr const char* kKey = "nccl/broadcast{bytes=1024}";

class HistoryStoreTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->RegisterAgent("history-agent", "node-9", "0.1.0").ok());
  }

  // A run of `branch` at `commit` whose one metric ("algbw") has the median
  // `value`, closed as `status`.
  void Close(const std::string& branch, const std::string& commit, double value,
             RunStatus status = RunStatus::kComplete) {
    RunMeta m;
    m.run_id = NewUuid();
    m.agent_name = "history-agent";
    m.environment.sku = "b200";
    m.branch = branch;
    m.commit = commit;
    m.trigger = Trigger::kCi;
    m.node = "node-9";
    m.started_at = TimePoint(std::chrono::seconds(1'716'000'000));
    CaseResult c;
    c.benchmark = {"nccl", "broadcast", {{"bytes", "1024"}}};
    c.metrics = {{"algbw", "GB/s", Direction::kHigherIsBetter}};
    c.samples = {Sample{0, {value}, false}};
    c.status = CaseStatus::kOk;
    ASSERT_TRUE(store_->OpenRun(m).ok());
    ASSERT_TRUE(store_->StoreBatch(m.run_id, 1, {c}).ok());
    ASSERT_TRUE(store_->CloseRun(m.run_id, status, 1, "").ok());
  }

  static std::vector<std::string> Commits(const absl::StatusOr<store::Series>& s) {
    std::vector<std::string> out;
    for (const auto& p : s->points) out.push_back(p.point.commit);
    return out;
  }
};

TEST_F(HistoryStoreTest, ASeriesTimeRangeHoldsTheNewestPointsFinishedWithinIt) {
  for (const char* commit : {"c1", "c2", "c3", "c4"}) Close("main", commit, 10);
  Close("main", "failed", 10, RunStatus::kFailed);
  store::SeriesQuery q{.benchmark = kKey, .metric = "algbw"};
  auto all = store_->GetSeries(q);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_THAT(Commits(all), ElementsAre("c1", "c2", "c3", "c4"));

  // [finished of c2, finished of c4): c2 and c3; the newest one of them at limit 1.
  q.from = all->points[1].point.finished_at;
  q.to = all->points[3].point.finished_at;
  EXPECT_THAT(Commits(store_->GetSeries(q)), ElementsAre("c2", "c3"));
  q.limit = 1;
  EXPECT_THAT(Commits(store_->GetSeries(q)), ElementsAre("c3"));

  q.from.reset();
  q.limit = 10;
  EXPECT_THAT(Commits(store_->GetSeries(q)), ElementsAre("c1", "c2", "c3"));
}

TEST_F(HistoryStoreTest, ATimeRangeEndingBeforeItBeginsIsRefusedByName) {
  store::SeriesQuery q{.benchmark = kKey, .metric = "algbw"};
  q.from = TimePoint(std::chrono::seconds(20));
  q.to = TimePoint(std::chrono::seconds(10));
  auto s = store_->GetSeries(q);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "to: must be later than from");
}

TEST_F(HistoryStoreTest, BranchAndNodeFiltersKeepTheirOwnNewestPoints) {
  Close("main", "m1", 1);
  Close("dev", "d1", 2);
  Close("main", "m2", 3);
  Close("dev", "d2", 4);
  store::SeriesQuery q{.benchmark = kKey, .metric = "algbw", .branch = "dev", .node = "node-9"};
  EXPECT_THAT(Commits(store_->GetSeries(q)), ElementsAre("d1", "d2"));
  q.node = "another-node";
  EXPECT_THAT(Commits(store_->GetSeries(q)), ElementsAre());
  auto h = store_->GetHistory(kKey, "algbw", "b200", "main", 1);
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->points.size(), 1u);
  EXPECT_EQ(h->points[0].commit, "m2");
  EXPECT_DOUBLE_EQ(h->points[0].median, 3);
}

// Runs that finished at the same instant come in run id order among the
// older and newer ones; a limit that cuts through them keeps those of the
// lowest run ids (the series index's order: newest first, then run id).
TEST_F(HistoryStoreTest, RunsFinishedAtOneInstantComeInRunIdOrder) {
  for (const char* commit : {"a", "b", "c", "d", "e"}) Close("main", commit, 10);
  {
    pqxx::connection c(server().ConnInfo(DatabaseName()));
    pqxx::work txn(c);
    txn.exec("UPDATE series_points SET finished_at = timestamptz '2026-01-01 00:00:00+00' "
             "WHERE commit IN ('b', 'c', 'd')");
    txn.exec("UPDATE series_points SET finished_at = timestamptz '2025-12-31 00:00:00+00' WHERE commit = 'a'");
    txn.commit();
  }
  std::vector<std::string> tied;
  {
    pqxx::connection c(server().ConnInfo(DatabaseName()));
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec("SELECT commit FROM series_points WHERE commit IN ('b', 'c', 'd') ORDER BY run_id")) {
      tied.push_back(row[0].as<std::string>());
    }
  }
  ASSERT_EQ(tied.size(), 3u);
  store::SeriesQuery q{.benchmark = kKey, .metric = "algbw"};
  EXPECT_THAT(Commits(store_->GetSeries(q)), ElementsAre("a", tied[0], tied[1], tied[2], "e"));
  q.limit = 3;
  EXPECT_THAT(Commits(store_->GetSeries(q)), ElementsAre(tied[0], tied[1], "e"));
}

// Runs closed before migration 0014 are points of their series after it:
// complete runs with samples only, as CloseRun keeps them.
TEST_F(HistoryStoreTest, Migration14KeepsThePointsOfRunsClosedBeforeIt) {
  ASSERT_TRUE(server().CreateDatabase(DatabaseName() + "_before14").ok());
  {
    pqxx::connection c(server().ConnInfo(DatabaseName() + "_before14"));
    pqxx::work txn(c);
    MigrateUpTo(txn, 13);
    txn.exec("INSERT INTO agents (name) VALUES ('old')");
    txn.exec("INSERT INTO environments (hash, sku) VALUES ('old', 'b200')");
    txn.exec("INSERT INTO benchmarks (key, suite, name) VALUES ('nccl/broadcast{bytes=1024}', 'nccl', 'broadcast')");
    txn.exec("INSERT INTO metrics (benchmark_id, name, unit, direction) "
             "SELECT id, 'algbw', 'GB/s', 'higher_is_better' FROM benchmarks");
    txn.exec("INSERT INTO runs (id, agent_id, environment_id, sku, branch, commit, trigger, started_at, "
             "finished_at, status) SELECT gen_random_uuid(), a.id, e.id, 'b200', 'main', v.commit, 'ci', "
             "now(), now() - v.age * interval '1 minute', v.status FROM agents a, environments e, "
             "(VALUES ('old1', 3, 'complete'), ('old2', 2, 'complete'), ('empty', 1, 'complete'), "
             "('failed', 0, 'failed')) v(commit, age, status)");
    txn.exec("INSERT INTO summaries (run_id, metric_id, n, median) SELECT r.id, m.id, "
             "CASE r.commit WHEN 'empty' THEN 0 ELSE 5 END, CASE r.commit WHEN 'empty' THEN NULL "
             "WHEN 'old1' THEN 7 ELSE 8 END FROM runs r, metrics m");
    txn.commit();
  }
  auto store = Store::Connect(server().ConnInfo(DatabaseName() + "_before14"), 1);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Migrate().ok());
  auto h = (*store)->GetHistory(kKey, "algbw", "b200", "main", 10);
  ASSERT_TRUE(h.ok()) << h.status();
  ASSERT_EQ(h->points.size(), 2u);
  EXPECT_EQ(h->points[0].commit, "old1");
  EXPECT_DOUBLE_EQ(h->points[0].median, 7);
  EXPECT_EQ(h->points[1].commit, "old2");
  EXPECT_EQ(h->points[1].n, 5u);
}

}  // namespace
}  // namespace perfgate::coordinator
