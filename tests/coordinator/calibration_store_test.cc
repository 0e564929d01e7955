// Calibrations in PostgreSQL: the newest measurement per node, environment,
// case and metric is kept; reads filter by SKU, node, environment and age.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "coordinator/store.h"
#include "tests/coordinator/migrated_store_test.h"

namespace perfgate::coordinator {
namespace {

using ::testing::HasSubstr;

constexpr auto kCalibrationDay = std::chrono::hours(24);
const Environment kEnv = {"cpu-amd-epyc", {{"kernel", "6.1"}}};

class CalibrationStoreTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(store_->RegisterAgent("agent", "host", "test").ok());
  }

  static CalibrationSet Set(double spread, TimePoint at, const std::string& node = "n1",
                            const Environment& env = kEnv) {
    CalibrationSet set;
    set.node = node;
    set.environment = env;
    set.measured_at = at;
    set.entries = {{"kernels/sgemm{m=512}", "time", "ms", Direction::kLowerIsBetter, spread, 10},
                   {"kernels/sgemm{m=512}", "gflops", "GFLOP/s", Direction::kHigherIsBetter, spread, 10}};
    return set;
  }

  std::vector<CalibrationRecord> Get(const std::string& sku, const std::string& node,
                                     const std::string& hash,
                                     std::optional<std::chrono::seconds> max_age = std::nullopt) {
    auto r = store_->GetCalibrations(sku, node, hash, max_age);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : std::vector<CalibrationRecord>{};
  }

  const TimePoint now_ = std::chrono::system_clock::now();
};

TEST_F(CalibrationStoreTest, StoresEveryEntryAndReadsThemBack) {
  auto stored = store_->PutCalibration("agent", Set(0.0123456789, now_ - kCalibrationDay));
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, 2u);
  const auto got = Get("cpu-amd-epyc", "n1", kEnv.Hash());
  ASSERT_EQ(got.size(), 2u);
  // Ordered by benchmark then metric: gflops before time.
  EXPECT_EQ(got[0].entry.metric, "gflops");
  EXPECT_EQ(got[0].entry.direction, Direction::kHigherIsBetter);
  EXPECT_EQ(got[1].entry.metric, "time");
  EXPECT_EQ(got[1].entry.unit, "ms");
  EXPECT_EQ(got[1].entry.spread, 0.0123456789);
  EXPECT_EQ(got[1].entry.processes, 10u);
  EXPECT_EQ(got[1].sku, "cpu-amd-epyc");
  EXPECT_EQ(got[1].node, "n1");
  EXPECT_EQ(got[1].environment_hash, kEnv.Hash());
  EXPECT_LT(std::chrono::abs(got[1].measured_at - (now_ - kCalibrationDay)), std::chrono::microseconds(2));
}

TEST_F(CalibrationStoreTest, ANewerMeasurementReplacesTheStoredOneAnOlderOneChangesNothing) {
  ASSERT_TRUE(store_->PutCalibration("agent", Set(0.01, now_ - 3 * kCalibrationDay)).ok());
  auto newer = store_->PutCalibration("agent", Set(0.02, now_ - 2 * kCalibrationDay));
  ASSERT_TRUE(newer.ok()) << newer.status();
  EXPECT_EQ(*newer, 2u);
  auto late = store_->PutCalibration("agent", Set(0.5, now_ - 5 * kCalibrationDay));
  ASSERT_TRUE(late.ok()) << late.status();
  EXPECT_EQ(*late, 0u);
  const auto got = Get("", "", "");
  ASSERT_EQ(got.size(), 2u);
  for (const CalibrationRecord& r : got) EXPECT_EQ(r.entry.spread, 0.02) << r.entry.metric;
}

TEST_F(CalibrationStoreTest, MaxAgeLeavesOutCalibrationsMeasuredLongerAgo) {
  ASSERT_TRUE(store_->PutCalibration("agent", Set(0.01, now_ - 40 * kCalibrationDay)).ok());
  EXPECT_TRUE(Get("cpu-amd-epyc", "n1", kEnv.Hash(), std::chrono::hours(24 * 30)).empty());
  EXPECT_EQ(Get("cpu-amd-epyc", "n1", kEnv.Hash(), std::chrono::hours(24 * 50)).size(), 2u);
  EXPECT_EQ(Get("cpu-amd-epyc", "n1", kEnv.Hash()).size(), 2u);
}

TEST_F(CalibrationStoreTest, AnotherEnvironmentIsKeptBesideAndNotReturnedForThisOne) {
  const Environment updated = {"cpu-amd-epyc", {{"kernel", "6.8"}}};
  ASSERT_TRUE(store_->PutCalibration("agent", Set(0.01, now_ - kCalibrationDay)).ok());
  ASSERT_TRUE(store_->PutCalibration("agent", Set(0.03, now_, "n1", updated)).ok());
  const auto old_env = Get("cpu-amd-epyc", "n1", kEnv.Hash());
  ASSERT_EQ(old_env.size(), 2u);
  EXPECT_EQ(old_env[0].entry.spread, 0.01);
  const auto new_env = Get("cpu-amd-epyc", "n1", updated.Hash());
  ASSERT_EQ(new_env.size(), 2u);
  EXPECT_EQ(new_env[0].entry.spread, 0.03);
  EXPECT_EQ(Get("cpu-amd-epyc", "n1", "").size(), 4u);
  EXPECT_TRUE(Get("cpu-amd-epyc", "n2", kEnv.Hash()).empty());
  EXPECT_TRUE(Get("h100-sxm5-80gb", "n1", "").empty());
}

TEST_F(CalibrationStoreTest, RefusesAnUnregisteredAgentAndBadEntriesWritingNothing) {
  auto unknown = store_->PutCalibration("stranger", Set(0.01, now_));
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  CalibrationSet bad = Set(0.01, now_);
  bad.entries[1].spread = std::numeric_limits<double>::quiet_NaN();
  auto nan = store_->PutCalibration("agent", bad);
  EXPECT_EQ(nan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(nan.status().message()), HasSubstr("spread"));
  CalibrationSet twice = Set(0.01, now_);
  twice.entries[1] = twice.entries[0];
  EXPECT_EQ(store_->PutCalibration("agent", twice).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(Get("", "", "").empty());
}

}  // namespace
}  // namespace perfgate::coordinator
