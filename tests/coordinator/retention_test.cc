// Partitions of samples made ahead of time, retention that removes a run
// whole, and batches of many cases, against a real PostgreSQL (label `db`).
#include <chrono>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "coordinator/domain/notification_events.h"
#include "coordinator/store.h"
#include "gtest/gtest.h"
#include "tests/coordinator/migrated_store_test.h"

namespace perfgate::coordinator {
namespace {

constexpr const char* kRetentionAgent = "agent-1";

RunMeta NewRun(const std::string& branch) {
  RunMeta m;
  m.run_id = NewUuid();
  m.agent_name = kRetentionAgent;
  m.environment.sku = "h100-sxm5-80gb";
  m.branch = branch;
  m.commit = "c1";
  m.trigger = Trigger::kCi;
  return m;
}

// Case `name` with two metrics and `n` samples, indexed from `first`.
CaseResult Case(const std::string& name, uint32_t n, CaseStatus status = CaseStatus::kUnspecified,
                uint32_t first = 0) {
  CaseResult c;
  c.benchmark = {"kernels", name, {{"n", "4096"}}};
  c.metrics = {{"time_ms", "ms", Direction::kLowerIsBetter}, {"tflops", "TFLOP/s", Direction::kHigherIsBetter}};
  for (uint32_t i = first; i < first + n; ++i) {
    c.samples.push_back(Sample{i, {1.0 + 0.01 * i, 100.0 - 0.1 * i}, i == 3});
  }
  c.status = status;
  return c;
}

TimePoint Utc(int year, unsigned month, unsigned day) {
  return std::chrono::sys_days(std::chrono::year(year) / month / day);
}

class RetentionTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->RegisterAgent(kRetentionAgent, "node", "0").ok());
    auto made = store_->EnsurePartitions(std::chrono::system_clock::now());
    ASSERT_TRUE(made.ok()) << made.status();
  }

  int64_t Count(const std::string& sql) {
    pqxx::connection c(ConnInfo());
    pqxx::nontransaction t(c);
    return t.exec(sql)[0][0].as<int64_t>();
  }

  // Rows of run_id in every table that holds rows of a run.
  std::vector<int64_t> RowsOf(const std::string& run_id) {
    std::vector<int64_t> out;
    for (const char* table : {"runs", "samples", "summaries", "batches", "run_cases", "gate_reports"}) {
      const char* column = std::string(table) == "runs" ? "id"
                           : std::string(table) == "gate_reports" ? "candidate_run_id"
                                                                  : "run_id";
      out.push_back(Count(absl::StrCat("SELECT count(*) FROM ", table, " WHERE ", column, " = '", run_id, "'")));
    }
    return out;
  }

  // A closed run of `branch` with two batches of two cases and a gate report.
  std::string StoredRun(const std::string& branch) {
    const RunMeta meta = NewRun(branch);
    EXPECT_TRUE(store_->OpenRun(meta).ok());
    EXPECT_TRUE(store_->StoreBatch(meta.run_id, 1, {Case("gemm", 20), Case("conv", 10)}).ok());
    EXPECT_TRUE(store_->StoreBatch(meta.run_id, 2, {Case("gemm", 5, CaseStatus::kOk, 20)}).ok());
    EXPECT_TRUE(store_->CloseRun(meta.run_id, RunStatus::kComplete, 2, "").ok());
    EXPECT_TRUE(store_->SaveGateReport(meta.run_id, "main", gate::Outcome::kPass, "{}").ok());
    return meta.run_id;
  }
};

TEST_F(RetentionTest, ExpiringABranchRemovesEveryRowOfItsRunsAndNothingOfAKeptOne) {
  const std::string expired = StoredRun("feature/x");
  const std::string kept = StoredRun("main");
  const std::vector<int64_t> kept_before = RowsOf(kept);
  ASSERT_EQ(kept_before, (std::vector<int64_t>{1, 70, 4, 2, 2, 1}));  // (20+10+5) samples x 2 metrics
  ASSERT_EQ(RowsOf(expired), kept_before);

  auto out = store_->ExpireRuns(RetentionRule{std::nullopt, "feature/x"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->runs, 1u);
  EXPECT_EQ(out->samples, 70u);
  EXPECT_EQ(RowsOf(expired), (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(RowsOf(kept), kept_before);
  EXPECT_TRUE(store_->GetRun(kept).ok());
  EXPECT_EQ(store_->GetRun(expired).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RetentionTest, ExpiringByAgeKeepsNewerRunsAndRunningOnes) {
  const std::string old_run = StoredRun("main");
  const std::string new_run = StoredRun("main");
  const RunMeta running = NewRun("main");
  ASSERT_TRUE(store_->OpenRun(running).ok());
  // Forty days older: the run's times and its samples' arrival.
  ASSERT_TRUE(store_->EnsurePartitions(std::chrono::system_clock::now() - std::chrono::hours(24 * 40)).ok());
  {
    pqxx::connection c(ConnInfo());
    pqxx::work t(c);
    t.exec_params("UPDATE runs SET opened_at = opened_at - interval '40 days', "
                  "finished_at = finished_at - interval '40 days' WHERE id = $1", old_run);
    t.exec_params("UPDATE samples SET received_at = received_at - interval '40 days' WHERE run_id = $1", old_run);
    t.commit();
  }
  const std::vector<int64_t> new_before = RowsOf(new_run);
  auto out = store_->ExpireRuns(
      RetentionRule{std::chrono::system_clock::now() - std::chrono::hours(24 * 30), ""});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->runs, 1u);
  EXPECT_EQ(RowsOf(old_run), (std::vector<int64_t>{0, 0, 0, 0, 0, 0}));
  EXPECT_GE(out->partitions_dropped, 1u);  // its month's partition, left empty
  EXPECT_EQ(RowsOf(new_run), new_before);
  EXPECT_TRUE(store_->GetRun(running.run_id).ok());
  EXPECT_EQ(store_->ExpireRuns(RetentionRule{}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RetentionTest, NextMonthsPartitionsExistBeforeTheirRowsArriveAndRowsNeverLandInTheDefault) {
  const std::string run = StoredRun("main");
  EXPECT_EQ(Count("SELECT count(*) FROM samples_default"), 0);
  const std::chrono::year_month_day today{std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now())};
  for (int ahead = 0; ahead <= 2; ++ahead) {
    const std::chrono::year_month ym = today.year() / today.month() + std::chrono::months(ahead);
    const std::string name = absl::StrCat("samples_", static_cast<int>(ym.year()), "_",
                                          absl::Dec(static_cast<unsigned>(ym.month()), absl::kZeroPad2));
    EXPECT_EQ(Count(absl::StrCat("SELECT count(*) FROM pg_class WHERE relname = '", name, "'")), 1) << name;
    if (ahead == 0) {
      EXPECT_EQ(Count("SELECT count(*) FROM " + name), 70);
    }
  }
  // A month far ahead: made once, in advance, with nothing scanned or moved.
  auto made = store_->EnsurePartitions(Utc(2031, 5, 17), 1);
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(*made, 2u);
  EXPECT_EQ(*store_->EnsurePartitions(Utc(2031, 5, 17), 1), 0u);
  {
    pqxx::connection c(ConnInfo());
    pqxx::work t(c);
    t.exec_params("INSERT INTO samples (run_id, benchmark_id, metric_id, idx, value, received_at) "
                  "VALUES ($1, 1, 1, 0, 1.5, '2031-06-30 23:59:59+00')",
                  run);
    t.commit();
  }
  EXPECT_EQ(Count("SELECT count(*) FROM samples_2031_06"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM samples_default"), 0);

  // A month made late takes its rows out of the default partition.
  {
    pqxx::connection c(ConnInfo());
    pqxx::work t(c);
    t.exec_params("INSERT INTO samples (run_id, benchmark_id, metric_id, idx, value, received_at) "
                  "VALUES ($1, 1, 1, 0, 1.5, '2032-01-10 12:00:00+00'), ($1, 1, 1, 1, 2.5, '2032-03-01 00:00:00+00')",
                  run);
    t.commit();
  }
  ASSERT_EQ(Count("SELECT count(*) FROM samples_default"), 2);
  auto late = store_->EnsurePartitions(Utc(2032, 1, 10), 0);
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(*late, 1u);
  EXPECT_EQ(Count("SELECT count(*) FROM samples_2032_01"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM samples_default"), 1);  // March's row waits for March
  EXPECT_EQ(Count("SELECT count(*) FROM samples WHERE run_id = '" + run + "'"), 73);
}

TEST_F(RetentionTest, ABatchOfManyCasesIsStoredLikeOneBatchPerCase) {
  const RunMeta meta = NewRun("main");
  ASSERT_TRUE(store_->OpenRun(meta).ok());
  // The same case twice in one batch (its second part says how it ended),
  // and samples of a case arriving out of order across batches.
  CaseResult late = Case("gemm", 0);
  late.samples = {Sample{7, {9.0, 1.0}, false}};
  ASSERT_TRUE(store_->StoreBatch(meta.run_id, 1, {late, Case("conv", 6)}).ok());
  CaseResult head = Case("gemm", 5);
  CaseResult tail = Case("gemm", 0, CaseStatus::kTimedOut);
  tail.reason = "time limit";
  tail.samples = {Sample{5, {8.0, 2.0}, false}};
  auto stored = store_->StoreBatch(meta.run_id, 2, {head, tail, Case("conv", 0)});
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(stored->samples_stored, 6u);
  auto closed = store_->CloseRun(meta.run_id, RunStatus::kComplete, 2, "");
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->cases, 2u);
  EXPECT_EQ(closed->samples, 13u);
  auto samples = store_->GetSamples(meta.run_id);
  ASSERT_TRUE(samples.ok()) << samples.status();
  const std::string gemm = Case("gemm", 0).benchmark.Key();
  // Index order (0..4 then 5 then 7), the throttled sample 3 left out.
  EXPECT_EQ(samples->at({gemm, "time_ms"}), (std::vector<double>{1.0, 1.0 + 0.01 * 1, 1.0 + 0.01 * 2, 1.0 + 0.01 * 4, 8.0, 9.0}));
  auto summaries = store_->GetSummaries(meta.run_id);
  ASSERT_TRUE(summaries.ok());
  ASSERT_EQ(summaries->size(), 4u);
  for (const MetricSummary& s : *summaries) {
    if (s.benchmark != gemm) continue;
    EXPECT_EQ(s.status, CaseStatus::kTimedOut);
    EXPECT_EQ(s.reason, "time limit");
    EXPECT_EQ(s.n, 6u);
    EXPECT_EQ(s.n_throttled, 1u);
  }
}

}  // namespace
}  // namespace perfgate::coordinator
