// The PostgreSQL store against a real server (label `db`): each test gets a
// fresh database on a private server started by tests/support/postgres.
#include "coordinator/store.h"
#include "tests/coordinator/migrated_store_test.h"

#include <chrono>
#include <cmath>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "coordinator/migrations.h"
#include "coordinator/domain/notification_events.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kAgent = "agent-1";
constexpr const char* kSku = "h100-sxm5-80gb";

RunMeta MakeRun(const std::string& branch = "main", const std::string& commit = "c0",
                const std::string& sku = kSku) {
  RunMeta m;
  m.run_id = NewUuid();
  m.agent_name = kAgent;
  m.environment.sku = sku;
  m.environment.fields = {{"driver", "550.54.15"}, {"cuda", "12.4"}};
  m.repo = "github.com/acme/kernels";
  m.branch = branch;
  m.commit = commit;
  m.trigger = Trigger::kCi;
  m.ci_job = "job-17";
  m.node = "gpu-node-3";
  // Whole microseconds: what timestamptz keeps.
  m.started_at = TimePoint(std::chrono::microseconds(1'716'200'000'123'456));
  m.parent_commits = {"p1", "p2"};
  return m;
}

// kernels/gemm{dtype=bf16,n=8192} reporting TFLOP/s and ms, one value each per sample.
CaseResult GemmCase(std::vector<Sample> samples, CaseStatus status = CaseStatus::kUnspecified) {
  CaseResult c;
  c.benchmark = {"kernels", "gemm", {{"dtype", "bf16"}, {"n", "8192"}}};
  c.metrics = {{"tflops", "TFLOP/s", Direction::kHigherIsBetter},
               {"time_ms", "ms", Direction::kLowerIsBetter}};
  c.samples = std::move(samples);
  c.status = status;
  return c;
}

Sample S(uint32_t index, double tflops, double ms, bool throttled = false) {
  return Sample{index, {tflops, ms}, throttled};
}

// One metric, "busbw" in GB/s, of a collective.
CaseResult AllReduceCase(std::vector<double> values) {
  CaseResult c;
  c.benchmark = {"nccl", "all_reduce", {{"bytes", "268435456"}}};
  c.metrics = {{"busbw", "GB/s", Direction::kHigherIsBetter}};
  for (size_t i = 0; i < values.size(); ++i) {
    c.samples.push_back(Sample{static_cast<uint32_t>(i), {values[i]}, false});
  }
  c.status = CaseStatus::kOk;
  return c;
}

class StoreTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->RegisterAgent(kAgent, "node-3.cluster", "0.1.0").ok());
  }

  // Row count of a table, read over a connection of its own so that nothing
  // the store caches or leaves uncommitted can influence it.
  int64_t CountRows(const std::string& table) {
    pqxx::connection c(ConnInfo());
    pqxx::nontransaction t(c);
    return t.exec("SELECT count(*) FROM " + table)[0][0].as<int64_t>();
  }

  // Opens a run, stores one batch of a single all_reduce case with these
  // values, and closes it as status.
  std::string RunWithMedianOf(const std::string& branch, const std::string& commit,
                              std::vector<double> values, RunStatus status = RunStatus::kComplete,
                              const std::string& sku = kSku) {
    RunMeta meta = MakeRun(branch, commit, sku);
    EXPECT_TRUE(store_->OpenRun(meta).ok());
    EXPECT_TRUE(store_->StoreBatch(meta.run_id, 1, {AllReduceCase(std::move(values))}).ok());
    if (status != RunStatus::kRunning) {
      EXPECT_TRUE(store_->CloseRun(meta.run_id, status, 1, "").ok());
    }
    return meta.run_id;
  }
};

TEST_F(StoreTest, MigrationsApplyOnceAndReapplyingChangesNothing) {
  ASSERT_TRUE(server().CreateDatabase(DatabaseName() + "_fresh").ok());
  auto store = Store::Connect(server().ConnInfo(DatabaseName() + "_fresh"));
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(*(*store)->SchemaVersion(), 0);

  ASSERT_TRUE((*store)->Migrate().ok());
  EXPECT_EQ(*(*store)->SchemaVersion(), Store::LatestSchemaVersion());
  ASSERT_TRUE((*store)->Migrate().ok());
  EXPECT_EQ(*(*store)->SchemaVersion(), Store::LatestSchemaVersion());

  pqxx::connection c(server().ConnInfo(DatabaseName() + "_fresh"));
  pqxx::nontransaction t(c);
  EXPECT_EQ(t.exec("SELECT count(*) FROM schema_migrations")[0][0].as<size_t>(),
            Migrations().size());
}

TEST_F(StoreTest, ConcurrentMigrationsApplyEachVersionOnce) {
  ASSERT_TRUE(server().CreateDatabase(DatabaseName() + "_raced").ok());
  std::vector<absl::Status> results(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back([&, i] {
      auto store = Store::Connect(server().ConnInfo(DatabaseName() + "_raced"), 1);
      results[i] = store.ok() ? (*store)->Migrate() : store.status();
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& r : results) EXPECT_TRUE(r.ok()) << r;

  pqxx::connection c(server().ConnInfo(DatabaseName() + "_raced"));
  pqxx::nontransaction t(c);
  EXPECT_EQ(t.exec("SELECT count(*) FROM schema_migrations")[0][0].as<size_t>(),
            Migrations().size());
}

TEST_F(StoreTest, RunsWithTheSameEnvironmentShareOneEnvironmentRow) {
  RunMeta a = MakeRun(), b = MakeRun(), c = MakeRun();
  c.environment.fields["driver"] = "560.28.03";
  ASSERT_TRUE(store_->OpenRun(a).ok());
  ASSERT_TRUE(store_->OpenRun(b).ok());
  EXPECT_EQ(CountRows("environments"), 1);
  ASSERT_TRUE(store_->OpenRun(c).ok());
  EXPECT_EQ(CountRows("environments"), 2);
  EXPECT_EQ(CountRows("runs"), 3);

  auto stored = store_->GetRun(c.run_id);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->meta.environment.fields, c.environment.fields);
}

TEST_F(StoreTest, OpenedRunReadsBackAsSent) {
  RunMeta meta = MakeRun("feature/x", "abc123");
  auto reopened = store_->OpenRun(meta);
  ASSERT_TRUE(reopened.ok()) << reopened.status();
  EXPECT_FALSE(*reopened);

  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->meta.run_id, meta.run_id);
  EXPECT_EQ(run->meta.agent_name, kAgent);
  EXPECT_EQ(run->meta.environment.sku, kSku);
  EXPECT_EQ(run->meta.repo, meta.repo);
  EXPECT_EQ(run->meta.branch, "feature/x");
  EXPECT_EQ(run->meta.commit, "abc123");
  EXPECT_EQ(run->meta.trigger, Trigger::kCi);
  EXPECT_EQ(run->meta.ci_job, "job-17");
  EXPECT_EQ(run->meta.node, "gpu-node-3");
  EXPECT_EQ(run->meta.started_at, meta.started_at);
  EXPECT_THAT(run->meta.parent_commits, ElementsAre("p1", "p2"));
  EXPECT_EQ(run->status, RunStatus::kRunning);
  EXPECT_FALSE(run->finished_at.has_value());
  EXPECT_EQ(run->samples, 0u);
}

TEST_F(StoreTest, TwoBatchesThenCloseGiveHandComputedSummaries) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());

  auto first = store_->StoreBatch(
      meta.run_id, 1, {GemmCase({S(0, 100, 2.0), S(1, 110, 1.8), S(2, 50, 4.0, true)})});
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->duplicate);
  EXPECT_EQ(first->samples_stored, 3u);
  CaseResult last = GemmCase({S(3, 90, 2.2), S(4, 105, 1.9)}, CaseStatus::kOk);
  last.reason = "noise target met";
  auto second = store_->StoreBatch(meta.run_id, 2, {last});
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->samples_stored, 2u);

  auto closed = store_->CloseRun(meta.run_id, RunStatus::kComplete, 2, "");
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->cases, 1u);
  EXPECT_EQ(closed->samples, 5u);

  auto summaries = store_->GetSummaries(meta.run_id);
  ASSERT_TRUE(summaries.ok()) << summaries.status();
  ASSERT_EQ(summaries->size(), 2u);
  // Ordered by metric name: "tflops" < "time_ms".
  const MetricSummary& tflops = (*summaries)[0];
  EXPECT_EQ(tflops.benchmark, "kernels/gemm{dtype=bf16,n=8192}");
  EXPECT_EQ(tflops.metric, "tflops");
  EXPECT_EQ(tflops.unit, "TFLOP/s");
  EXPECT_EQ(tflops.direction, Direction::kHigherIsBetter);
  // Unthrottled: 100, 110, 90, 105; the throttled 50 is left out and counted.
  EXPECT_EQ(tflops.n, 4u);
  EXPECT_EQ(tflops.n_throttled, 1u);
  EXPECT_DOUBLE_EQ(tflops.median, 102.5);
  EXPECT_DOUBLE_EQ(tflops.mean, 101.25);
  EXPECT_DOUBLE_EQ(tflops.min, 90);
  EXPECT_DOUBLE_EQ(tflops.max, 110);
  // Squared deviations from 101.25: 1.5625 + 76.5625 + 126.5625 + 14.0625.
  EXPECT_DOUBLE_EQ(tflops.stdev, std::sqrt(218.75 / 3));
  EXPECT_DOUBLE_EQ(tflops.noise, std::sqrt(218.75 / 3) / 101.25);
  EXPECT_EQ(tflops.status, CaseStatus::kOk);
  EXPECT_EQ(tflops.reason, "noise target met");

  const MetricSummary& ms = (*summaries)[1];
  EXPECT_EQ(ms.metric, "time_ms");
  EXPECT_EQ(ms.unit, "ms");
  EXPECT_EQ(ms.direction, Direction::kLowerIsBetter);
  EXPECT_EQ(ms.n, 4u);
  EXPECT_EQ(ms.n_throttled, 1u);
  EXPECT_DOUBLE_EQ(ms.median, 1.95);  // of 1.8, 1.9, 2.0, 2.2
  EXPECT_DOUBLE_EQ(ms.mean, 1.975);
  EXPECT_DOUBLE_EQ(ms.min, 1.8);
  EXPECT_DOUBLE_EQ(ms.max, 2.2);

  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->status, RunStatus::kComplete);
  EXPECT_TRUE(run->finished_at.has_value());
  EXPECT_EQ(run->samples, 5u);
  // One row per (sample, metric).
  EXPECT_EQ(CountRows("samples"), 10);
}

TEST_F(StoreTest, ResentBatchIsStoredOnceAndAckedAsDuplicate) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  const std::vector<CaseResult> batch = {GemmCase({S(0, 100, 2.0), S(1, 101, 2.1)})};

  auto first = store_->StoreBatch(meta.run_id, 1, batch);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->duplicate);
  const int64_t rows = CountRows("samples");

  auto again = store_->StoreBatch(meta.run_id, 1, batch);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(again->samples_stored, 0u);
  EXPECT_EQ(CountRows("samples"), rows);
  EXPECT_EQ(CountRows("batches"), 1);
  EXPECT_EQ(store_->GetRun(meta.run_id)->samples, 2u);

  // Still recognised after the run closed (the ack may have been lost).
  ASSERT_TRUE(store_->CloseRun(meta.run_id, RunStatus::kComplete, 1, "").ok());
  auto late = store_->StoreBatch(meta.run_id, 1, batch);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_TRUE(late->duplicate);
  EXPECT_EQ(CountRows("samples"), rows);
}

TEST_F(StoreTest, BatchWithANaNValueIsRefusedAndLeavesNoRows) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  auto r = store_->StoreBatch(meta.run_id, 1, {GemmCase({S(0, 100, 2.0), S(1, NAN, 2.0)})});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("kernels/gemm{dtype=bf16,n=8192}"));
  EXPECT_THAT(r.status().message(), HasSubstr("sample 1"));
  EXPECT_THAT(r.status().message(), HasSubstr("tflops"));
  EXPECT_EQ(CountRows("batches"), 0);
  EXPECT_EQ(CountRows("samples"), 0);
  EXPECT_EQ(CountRows("benchmarks"), 0);

  // The sequence is still free: the corrected batch is stored, not a duplicate.
  auto fixed = store_->StoreBatch(meta.run_id, 1, {GemmCase({S(0, 100, 2.0), S(1, 99, 2.0)})});
  ASSERT_TRUE(fixed.ok()) << fixed.status();
  EXPECT_FALSE(fixed->duplicate);
}

TEST_F(StoreTest, BatchWithAnInfiniteValueIsRefused) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  auto r = store_->StoreBatch(meta.run_id, 1, {GemmCase({S(0, 100, INFINITY)})});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("time_ms"));
  EXPECT_EQ(CountRows("samples"), 0);
}

TEST_F(StoreTest, BatchWithTheWrongNumberOfValuesIsRefusedAndLeavesNoRows) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  CaseResult c = GemmCase({S(0, 100, 2.0)});
  c.samples.push_back(Sample{1, {100.0}, false});
  auto r = store_->StoreBatch(meta.run_id, 1, {AllReduceCase({1, 2, 3}), c});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("sample 1 has 1 values"));
  EXPECT_EQ(CountRows("batches"), 0);
  EXPECT_EQ(CountRows("samples"), 0);
  EXPECT_EQ(CountRows("run_cases"), 0);
}

TEST_F(StoreTest, BatchChangingAMetricsUnitIsRefusedAndRolledBack) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  ASSERT_TRUE(store_->StoreBatch(meta.run_id, 1, {GemmCase({S(0, 100, 2.0)})}).ok());
  const int64_t rows = CountRows("samples");

  // Found only inside the transaction, after the batch row was written: the
  // rollback must take that row away too.
  CaseResult changed = GemmCase({S(1, 100, 2000.0)});
  changed.metrics[1].unit = "us";
  auto r = store_->StoreBatch(meta.run_id, 2, {AllReduceCase({5, 6}), changed});
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("kernels/gemm{dtype=bf16,n=8192}"));
  EXPECT_THAT(r.status().message(), HasSubstr("time_ms"));
  EXPECT_EQ(CountRows("batches"), 1);
  EXPECT_EQ(CountRows("samples"), rows);
  EXPECT_EQ(CountRows("benchmarks"), 1);  // all_reduce's upsert was rolled back
}

TEST_F(StoreTest, BatchForAnUnknownRunIsNotFound) {
  auto r = store_->StoreBatch(NewUuid(), 1, {GemmCase({S(0, 100, 2.0)})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_EQ(CountRows("batches"), 0);
}

TEST_F(StoreTest, BatchSequenceZeroIsInvalid) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  auto r = store_->StoreBatch(meta.run_id, 0, {GemmCase({S(0, 100, 2.0)})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
}

TEST_F(StoreTest, OpeningARunForAnUnregisteredAgentIsNotFound) {
  RunMeta meta = MakeRun();
  meta.agent_name = "stranger";
  auto r = store_->OpenRun(meta);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kNotFound) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("agent 'stranger' is not registered"));
  EXPECT_EQ(CountRows("runs"), 0);
}

TEST_F(StoreTest, ClosingWithAMissingBatchIsRefusedNamingIt) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  ASSERT_TRUE(store_->StoreBatch(meta.run_id, 1, {GemmCase({S(0, 100, 2.0)})}).ok());
  ASSERT_TRUE(store_->StoreBatch(meta.run_id, 3, {GemmCase({S(2, 100, 2.0)})}).ok());

  auto r = store_->CloseRun(meta.run_id, RunStatus::kComplete, 3, "");
  ASSERT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_THAT(r.status().message(), HasSubstr("batch 2 of 3 "));
  EXPECT_EQ(store_->GetRun(meta.run_id)->status, RunStatus::kRunning);

  ASSERT_TRUE(store_->StoreBatch(meta.run_id, 2, {GemmCase({S(1, 100, 2.0)})}).ok());
  auto closed = store_->CloseRun(meta.run_id, RunStatus::kComplete, 3, "");
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->samples, 3u);
}

TEST_F(StoreTest, ReopeningARunningRunIsAResendButAClosedOneAlreadyExists) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  auto again = store_->OpenRun(meta);  // a resend changes nothing
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(*again);
  RunMeta other = meta;
  other.branch = "changed";  // not a resend: another run under the same id
  EXPECT_EQ(store_->OpenRun(other).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(store_->GetRun(meta.run_id)->meta.branch, "main");

  ASSERT_TRUE(store_->CloseRun(meta.run_id, RunStatus::kFailed, 0, "device lost").ok());
  auto reopened = store_->OpenRun(meta);
  EXPECT_EQ(reopened.status().code(), absl::StatusCode::kAlreadyExists) << reopened.status();
  auto run = store_->GetRun(meta.run_id);
  EXPECT_EQ(run->status, RunStatus::kFailed);
  EXPECT_EQ(run->failure_reason, "device lost");
}

TEST_F(StoreTest, ClosingTwiceWithTheSameStatusChangesNothing) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  ASSERT_TRUE(
      store_->StoreBatch(meta.run_id, 1, {GemmCase({S(0, 100, 2.0)}, CaseStatus::kOk)}).ok());
  auto first = store_->CloseRun(meta.run_id, RunStatus::kComplete, 1, "");
  ASSERT_TRUE(first.ok()) << first.status();
  const auto finished = store_->GetRun(meta.run_id)->finished_at;

  auto second = store_->CloseRun(meta.run_id, RunStatus::kComplete, 1, "");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->cases, first->cases);
  EXPECT_EQ(second->samples, first->samples);
  EXPECT_EQ(store_->GetRun(meta.run_id)->finished_at, finished);

  auto other = store_->CloseRun(meta.run_id, RunStatus::kFailed, 1, "late");
  EXPECT_EQ(other.status().code(), absl::StatusCode::kFailedPrecondition) << other.status();
  auto more = store_->StoreBatch(meta.run_id, 2, {GemmCase({S(1, 100, 2.0)})});
  EXPECT_EQ(more.status().code(), absl::StatusCode::kFailedPrecondition) << more.status();
}

TEST_F(StoreTest, FindBaselineRunsFiltersBranchSkuCommitsAndExcludesTheCandidate) {
  // Closed in the order c2, c1, c3: newest finished first is c3, c1, c2.
  RunMeta c1 = MakeRun("main", "c1"), c2 = MakeRun("main", "c2"), c3 = MakeRun("main", "c3");
  for (const RunMeta* m : {&c1, &c2, &c3}) {
    ASSERT_TRUE(store_->OpenRun(*m).ok());
    ASSERT_TRUE(store_->StoreBatch(m->run_id, 1, {AllReduceCase({1, 2, 3})}).ok());
  }
  for (const RunMeta* m : {&c2, &c1, &c3}) {
    ASSERT_TRUE(store_->CloseRun(m->run_id, RunStatus::kComplete, 1, "").ok());
  }
  RunWithMedianOf("main", "other-sku", {1}, RunStatus::kComplete, "a100-sxm4-40gb");
  RunWithMedianOf("feature", "other-branch", {1});
  RunWithMedianOf("main", "failed", {1}, RunStatus::kFailed);
  RunWithMedianOf("main", "running", {1}, RunStatus::kRunning);
  const std::string candidate = RunWithMedianOf("main", "candidate", {1});

  auto commits = [](const absl::StatusOr<std::vector<RunRecord>>& runs) {
    std::vector<std::string> out;
    for (const auto& r : *runs) out.push_back(r.meta.commit);
    return out;
  };
  BaselineQuery q{.branch = "main",
                  .sku = kSku,
                  .exclude_run_id = candidate,
                  .allowed_commits = {},
                  .limit = 5};
  auto all = store_->FindBaselineRuns(q);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(commits(all), ElementsAre("c3", "c1", "c2"));
  for (const auto& r : *all) EXPECT_EQ(r.status, RunStatus::kComplete);

  q.limit = 2;
  EXPECT_THAT(commits(store_->FindBaselineRuns(q)), ElementsAre("c3", "c1"));

  q.limit = 5;
  q.allowed_commits = {"c2", "c3", "candidate"};
  EXPECT_THAT(commits(store_->FindBaselineRuns(q)), ElementsAre("c3", "c2"));

  q.allowed_commits = {};
  q.exclude_run_id = "";
  EXPECT_THAT(commits(store_->FindBaselineRuns(q)), ElementsAre("candidate", "c3", "c1", "c2"));
}

TEST_F(StoreTest, ListRunsIsNewestStartedFirstAndFilters) {
  RunMeta older = MakeRun("main", "old"), newer = MakeRun("main", "new"),
          other = MakeRun("dev", "d");
  newer.started_at += std::chrono::seconds(10);
  other.started_at += std::chrono::seconds(20);
  for (const RunMeta* m : {&newer, &older, &other}) ASSERT_TRUE(store_->OpenRun(*m).ok());

  auto main_runs = store_->ListRuns("main", "", 10);
  ASSERT_TRUE(main_runs.ok()) << main_runs.status();
  ASSERT_EQ(main_runs->size(), 2u);
  EXPECT_EQ((*main_runs)[0].meta.commit, "new");
  EXPECT_EQ((*main_runs)[1].meta.commit, "old");
  EXPECT_EQ(store_->ListRuns("", "", 10)->size(), 3u);
  EXPECT_EQ(store_->ListRuns("", "", 1)->front().meta.commit, "d");
  EXPECT_TRUE(store_->ListRuns("", "a100-sxm4-40gb", 10)->empty());
}

TEST_F(StoreTest, HistoryIsTheNewestCompleteRunMediansOldestFirst) {
  RunWithMedianOf("main", "h1", {9, 10, 11});
  RunWithMedianOf("main", "h2", {19, 20, 21});
  RunWithMedianOf("main", "h3", {29, 30, 31, 40});  // median 30.5
  RunWithMedianOf("main", "failed", {1}, RunStatus::kFailed);
  RunWithMedianOf("main", "running", {1}, RunStatus::kRunning);
  RunWithMedianOf("dev", "d1", {50});
  RunWithMedianOf("main", "a100", {60}, RunStatus::kComplete, "a100-sxm4-40gb");
  const std::string key = "nccl/all_reduce{bytes=268435456}";

  auto h = store_->GetHistory(key, "busbw", kSku, "main", 2);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h->unit, "GB/s");
  EXPECT_EQ(h->direction, Direction::kHigherIsBetter);
  ASSERT_EQ(h->points.size(), 2u);
  EXPECT_EQ(h->points[0].commit, "h2");
  EXPECT_DOUBLE_EQ(h->points[0].median, 20);
  EXPECT_EQ(h->points[0].n, 3u);
  EXPECT_EQ(h->points[1].commit, "h3");
  EXPECT_DOUBLE_EQ(h->points[1].median, 30.5);
  EXPECT_LE(h->points[0].finished_at, h->points[1].finished_at);

  auto every_branch = store_->GetHistory(key, "busbw", kSku, "", 10);
  ASSERT_TRUE(every_branch.ok()) << every_branch.status();
  std::vector<std::string> commits;
  for (const auto& p : every_branch->points) commits.push_back(p.commit);
  EXPECT_THAT(commits, ElementsAre("h1", "h2", "h3", "d1"));

  EXPECT_EQ(store_->GetHistory(key, "latency", kSku, "", 10).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(StoreTest, RunClosedWithInvalidReasonsReturnsThemAndItsDetails) {
  RunMeta meta = MakeRun();
  meta.details = {{"gpu0.uuid", "GPU-5e3b0a4c-6c2e-4f1b-9d7e-0a1b2c3d4e5f"},
                  {"gpu0.temperature_c", "41"},
                  {"nvml", "unavailable: NVML not found"},
                  {"slurm_job_id", "123456"}};
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  ASSERT_TRUE(store_->StoreBatch(meta.run_id, 1, {GemmCase({S(0, 700, 1.5)}, CaseStatus::kOk)}).ok());
  const std::vector<std::string> reasons = {
      "GPU 0 (pci 0000:1b:00.0): PCIe link gen 4 x16 below its maximum gen 5 x16",
      "GPU 0 (pci 0000:1b:00.0): MIG mode changed from disabled to enabled during the run"};
  ASSERT_TRUE(store_->CloseRun(meta.run_id, RunStatus::kComplete, 1, "", reasons).ok());

  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->invalid_reasons, reasons);
  EXPECT_EQ(run->meta.details, meta.details);
  EXPECT_EQ(run->status, RunStatus::kComplete);
  // Details are not the environment: another run with other details shares it.
  EXPECT_EQ(run->meta.environment.fields, meta.environment.fields);
}

TEST_F(StoreTest, RunClosedWithoutReasonsIsValidAndHasNoDetails) {
  RunMeta meta = MakeRun();
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  ASSERT_TRUE(store_->CloseRun(meta.run_id, RunStatus::kFailed, 0, "device lost").ok());
  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_TRUE(run->invalid_reasons.empty());
  EXPECT_TRUE(run->meta.details.empty());
  auto listed = store_->ListRuns("", "", 10);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE(listed->front().invalid_reasons.empty());
}

TEST_F(StoreTest, GateReportRoundTrips) {
  const std::string run = RunWithMedianOf("main", "c1", {1, 2, 3});
  const nlohmann::json report = {{"outcome", "regression"},
                                 {"verdicts", {{{"metric", "busbw"}, {"change", -0.042}}}}};
  gate::GateResult regression;
  regression.outcome = gate::Outcome::kRegression;
  auto id = store_->SaveGateReport(run, "main", regression.outcome, report.dump(), GateFailed(regression));
  ASSERT_TRUE(id.ok()) << id.status();

  auto back = store_->GetGateReport(*id);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(nlohmann::json::parse(*back), report);

  EXPECT_EQ(store_->GetGateReport(*id + 1).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->SaveGateReport(NewUuid(), "main", gate::Outcome::kPass, "{}").status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(store_->SaveGateReport(run, "main", gate::Outcome::kPass, "{not json").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Needs no server, so not a StoreTest.
TEST(Store, ConnectingToAPortWithNoServerIsUnavailable) {
  auto port = testing::FreeTcpPort();
  ASSERT_TRUE(port.ok()) << port.status();
  auto store = Store::Connect(absl::StrCat("host=127.0.0.1 port=", *port,
                                           " user=perfgate dbname=perfgate connect_timeout=5"));
  ASSERT_EQ(store.status().code(), absl::StatusCode::kUnavailable) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr("cannot connect to PostgreSQL"));
}

TEST_F(StoreTest, CallsAfterTheServerStopsAreUnavailable) {
  // A server of its own: stopping the shared one would break later tests.
  auto own = testing::PostgresServer::Start();
  ASSERT_TRUE(own.ok()) << own.status();
  auto store = Store::Connect((*own)->ConnInfo(), 1);
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Migrate().ok());

  (*own)->Stop();
  auto r = (*store)->RegisterAgent("a", "h", "v");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  // The broken connection was dropped: the next call tries a new one and is
  // still UNAVAILABLE (not INTERNAL from reusing a dead connection).
  auto again = (*store)->SchemaVersion();
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnavailable) << again.status();
}

// The fixture's own promises, checked here because the db tests are its users.
TEST(PostgresFixture, MissingServerBinariesSayToInstallThePostgresqlPackage) {
  setenv("PERFGATE_POSTGRES_BIN", "/nonexistent", 1);
  auto bin = testing::FindPostgresBinDir();
  unsetenv("PERFGATE_POSTGRES_BIN");
  ASSERT_EQ(bin.status().code(), absl::StatusCode::kFailedPrecondition) << bin.status();
  EXPECT_THAT(bin.status().message(), HasSubstr("install the postgresql package"));
}

TEST(PostgresFixture, WaitingForALineStopsWhenTheChildExits) {
  auto dir = testing::TempDir::Create();
  ASSERT_TRUE(dir.ok()) << dir.status();
  auto child = testing::ChildProcess::Start({"/bin/sh", "-c", "echo starting; echo \"$GREETING\""},
                                            dir->Join("out.log"), {.env = {{"GREETING", "hello"}}});
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_TRUE((*child)->WaitForLine("hello", std::chrono::seconds(30)));
  // Exits without printing it: false long before the timeout.
  EXPECT_FALSE((*child)->WaitForLine("never printed", std::chrono::minutes(5)));
  EXPECT_EQ((*child)->Kill(), 0);
}

}  // namespace
}  // namespace perfgate::coordinator
