// How a batch's samples reach PostgreSQL (binary COPY) and what StoreBatch
// keeps of them for CloseRun (migration 0016), against a real server
// (label `db`).
#include <charconv>
#include <cmath>
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

using ::testing::HasSubstr;

constexpr const char* kBatchAgent = "agent-1";

// A case of one metric, "time_ms", with these sample indexes and values.
CaseResult CopyTimeCase(const std::vector<uint32_t>& indexes, const std::vector<double>& values,
                    const std::vector<bool>& throttled = {}) {
  CaseResult c;
  c.benchmark = {"kernels", "copy", {{"bytes", "4096"}}};
  c.metrics = {{"time_ms", "ms", Direction::kLowerIsBetter}};
  for (size_t i = 0; i < values.size(); ++i) {
    c.samples.push_back(Sample{indexes[i], {values[i]}, i < throttled.size() && throttled[i]});
  }
  c.status = CaseStatus::kOk;
  return c;
}

class BatchSummariesTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->RegisterAgent(kBatchAgent, "node-1", "0.1.0").ok());
  }

  std::string Open() {
    RunMeta m;
    m.run_id = NewUuid();
    m.agent_name = kBatchAgent;
    m.environment.sku = "cpu-test";
    m.branch = "main";
    m.commit = "c1";
    m.trigger = Trigger::kCi;
    m.started_at = TimePoint(std::chrono::seconds(1'790'000'000));
    EXPECT_TRUE(store_->OpenRun(m).ok());
    return m.run_id;
  }

  // Runs one statement on a connection of its own.
  pqxx::result Sql(const std::string& sql) {
    pqxx::connection c(ConnInfo());
    pqxx::work t(c);
    pqxx::result r = t.exec(sql);
    t.commit();
    return r;
  }

  // The median CloseRun stored for the run's only metric.
  double ClosedMedian(const std::string& run_id, uint64_t last_sequence) {
    EXPECT_TRUE(store_->CloseRun(run_id, RunStatus::kComplete, last_sequence, "").ok());
    auto sums = store_->GetSummaries(run_id);
    EXPECT_TRUE(sums.ok() && sums->size() == 1);
    return sums.ok() && sums->size() == 1 ? (*sums)[0].median : std::nan("");
  }
};

TEST_F(BatchSummariesTest, EveryValueReachesTheTableBitForBit) {
  const std::string run = Open();
  const std::vector<double> values = {0.1, -0.0, 5e-324, 1.7976931348623157e308, -123.456, 1e-300};
  const std::vector<uint32_t> indexes = {0, 1, 10, 255, 65536, kMaxSampleIndex};
  const std::vector<bool> throttled = {false, true, false, false, true, false};
  ASSERT_TRUE(store_->StoreBatch(run, 1, {CopyTimeCase(indexes, values, throttled)}).ok());
  // float8send: the stored bits, whatever PostgreSQL would print.
  const pqxx::result rows = Sql("SELECT run_id::text, idx, encode(float8send(value), 'hex'), throttled, "
                                "benchmark_id > 0 AND metric_id > 0 FROM samples ORDER BY idx");
  ASSERT_EQ(rows.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(rows[i][0].as<std::string>(), run);
    EXPECT_EQ(rows[i][1].as<int64_t>(), static_cast<int64_t>(indexes[i]));
    uint64_t bits = 0;
    const std::string hex = rows[i][2].as<std::string>();
    std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
    EXPECT_EQ(bits, std::bit_cast<uint64_t>(values[i])) << "value " << values[i];
    EXPECT_EQ(rows[i][3].as<bool>(), throttled[i]);
    EXPECT_TRUE(rows[i][4].as<bool>());
  }
}

TEST_F(BatchSummariesTest, ACopyTheServerRefusesRollsTheBatchBackWithItsState) {
  Sql("CREATE FUNCTION refuse_samples() RETURNS trigger LANGUAGE plpgsql AS "
      "$$ BEGIN RAISE EXCEPTION 'sample refused here' USING ERRCODE = '22023'; END $$");
  Sql("CREATE TRIGGER refuse BEFORE INSERT ON samples FOR EACH ROW EXECUTE FUNCTION refuse_samples()");
  const std::string run = Open();
  const CaseResult c = CopyTimeCase({0, 1, 2}, {1.0, 2.0, 3.0});
  auto refused = store_->StoreBatch(run, 1, {c});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("22023"));
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("sample refused here"));
  EXPECT_EQ(Sql("SELECT count(*) FROM batches")[0][0].as<int>(), 0);

  // A serialization failure is ABORTED, to retry, as for any statement.
  Sql("CREATE OR REPLACE FUNCTION refuse_samples() RETURNS trigger LANGUAGE plpgsql AS "
      "$$ BEGIN RAISE EXCEPTION 'try again' USING ERRCODE = '40001'; END $$");
  EXPECT_EQ(store_->StoreBatch(run, 1, {c}).status().code(), absl::StatusCode::kAborted);

  // The connections are usable after: the same batch is stored whole.
  Sql("DROP TRIGGER refuse ON samples");
  for (int i = 0; i < 3; ++i) {  // every pooled connection
    auto stored = store_->StoreBatch(run, 1, {c});
    ASSERT_TRUE(stored.ok()) << stored.status();
  }
  EXPECT_EQ(Sql("SELECT count(*) FROM samples")[0][0].as<int>(), 3);
  EXPECT_DOUBLE_EQ(ClosedMedian(run, 1), 2.0);
}

TEST_F(BatchSummariesTest, PartsOfOneCaseInOneBatchAreSummarizedAsOneMetric) {
  const std::string run = Open();
  // Two parts of one case, a throttled sample in the second.
  ASSERT_TRUE(store_->StoreBatch(run, 1, {CopyTimeCase({0, 1, 2}, {5, 1, 9}), CopyTimeCase({3, 4, 5}, {2, 7, 100},
                                                                                   {false, false, true})})
                  .ok());
  ASSERT_TRUE(store_->CloseRun(run, RunStatus::kComplete, 1, "").ok());
  auto sums = store_->GetSummaries(run);
  ASSERT_TRUE(sums.ok()) << sums.status();
  ASSERT_EQ(sums->size(), 1u);
  EXPECT_EQ((*sums)[0].n, 5u);
  EXPECT_EQ((*sums)[0].n_throttled, 1u);
  EXPECT_DOUBLE_EQ((*sums)[0].median, 5.0);  // of 1, 2, 5, 7, 9
  EXPECT_DOUBLE_EQ((*sums)[0].mean, 4.8);
  EXPECT_DOUBLE_EQ((*sums)[0].max, 9.0);
}

TEST_F(BatchSummariesTest, AMetricOfOneBatchIsClosedFromWhatItsBatchKept) {
  const std::string run = Open();
  ASSERT_TRUE(store_->StoreBatch(run, 1, {CopyTimeCase({0, 1, 2}, {1, 2, 3})}).ok());
  const pqxx::result kept = Sql("SELECT sample_batches, batch_summary->>'median' FROM summaries");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0][0].as<int>(), 1);
  EXPECT_EQ(kept[0][1].as<double>(), 2.0);
  // CloseRun writes the kept row and reads no sample back: a kept median
  // changed behind its back shows in the summary.
  Sql("UPDATE summaries SET batch_summary = jsonb_set(batch_summary, '{median}', '42')");
  EXPECT_DOUBLE_EQ(ClosedMedian(run, 1), 42.0);
  EXPECT_EQ(Sql("SELECT count(*) FROM summaries WHERE batch_summary IS NOT NULL")[0][0].as<int>(), 0);
}

TEST_F(BatchSummariesTest, AMetricInTwoBatchesIsSummarizedFromAllItsSamples) {
  const std::string run = Open();
  ASSERT_TRUE(store_->StoreBatch(run, 1, {CopyTimeCase({0, 1}, {1, 2})}).ok());
  ASSERT_TRUE(store_->StoreBatch(run, 2, {CopyTimeCase({2, 3, 4}, {30, 40, 50})}).ok());
  const pqxx::result kept = Sql("SELECT sample_batches, batch_summary IS NULL FROM summaries");
  EXPECT_EQ(kept[0][0].as<int>(), 2);
  EXPECT_TRUE(kept[0][1].as<bool>());
  EXPECT_DOUBLE_EQ(ClosedMedian(run, 2), 30.0);  // of 1, 2, 30, 40, 50
}

TEST_F(BatchSummariesTest, ARunWithABatchStoredBeforeKeptSummariesIsReadBack) {
  const std::string run = Open();
  ASSERT_TRUE(store_->StoreBatch(run, 1, {CopyTimeCase({0, 1, 2}, {1, 2, 3})}).ok());
  // As a batch stored by an older coordinator leaves it: not counted.
  Sql("UPDATE batches SET summarized = false");
  Sql("UPDATE summaries SET batch_summary = jsonb_set(batch_summary, '{median}', '42')");
  EXPECT_DOUBLE_EQ(ClosedMedian(run, 1), 2.0);
}

TEST_F(BatchSummariesTest, AResentBatchCountsOnce) {
  const std::string run = Open();
  const std::vector<CaseResult> batch = {CopyTimeCase({0, 1, 2}, {1, 2, 3})};
  ASSERT_TRUE(store_->StoreBatch(run, 1, batch).ok());
  auto again = store_->StoreBatch(run, 1, batch);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->duplicate);
  EXPECT_EQ(Sql("SELECT sample_batches FROM summaries")[0][0].as<int>(), 1);
  EXPECT_FALSE(Sql("SELECT digest FROM batches")[0][0].as<std::string>().empty());
  EXPECT_DOUBLE_EQ(ClosedMedian(run, 1), 2.0);
}

}  // namespace
}  // namespace perfgate::coordinator
