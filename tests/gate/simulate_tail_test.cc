// The tail-latency simulation (gate/simulate_tail.h): deterministic, a
// doubling of p99 caught far more often than a tenth, the median of the same
// runs not taken for a regression, and the table says what it ran.
#include "gate/simulate_tail.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace perfgate::gate {
namespace {

using ::testing::HasSubstr;

TailSimulationOptions Small() {
  TailSimulationOptions o;
  o.requests = {1000};
  o.rounds = {20};
  o.changes = {0.1, 1.0};
  o.aa_trials = 60;
  o.power_trials = 40;
  return o;
}

TEST(SimulateTail, CatchesADoubledP99AndLeavesTheMedianAlone) {
  Policy policy;
  policy.tolerance = 0.2;
  const std::vector<TailSimulationRow> rows = SimulateTail(Small(), policy);
  ASSERT_EQ(rows.size(), 1u);
  const TailSimulationRow& r = rows[0];
  ASSERT_EQ(r.detection.size(), 2u);
  EXPECT_GE(r.detection[1], 0.9);    // p99 x 2
  EXPECT_LE(r.detection[0], 0.25);   // p99 x 1.1, below the 20 % tolerance
  EXPECT_LE(r.median_flagged[1], 0.05);
  EXPECT_LE(r.false_alarm, 0.05);
}

TEST(SimulateTail, IsDeterministicAndRendersWhatItRan) {
  Policy policy;
  const TailSimulationOptions o = Small();
  const std::vector<TailSimulationRow> a = SimulateTail(o, policy), b = SimulateTail(o, policy);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a[0].detection, b[0].detection);
  EXPECT_EQ(a[0].false_alarm, b[0].false_alarm);
  const std::string table = RenderTailSimulation(o, policy, a);
  EXPECT_THAT(table, HasSubstr("| 1000 | 20 |"));
  EXPECT_THAT(table, HasSubstr("p99 +100 % caught"));
}

}  // namespace
}  // namespace perfgate::gate
