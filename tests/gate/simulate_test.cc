#include "gate/simulate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace perfgate::gate {
namespace {

using ::testing::HasSubstr;

// A small simulation: enough gates to tell a working gate from a broken one,
// few enough to run in a unit test.
SimulationOptions Small() {
  SimulationOptions o;
  o.noise_levels = {0.01};
  o.slowdowns = {0.10};
  o.metrics = 10;
  o.aa_trials = 40;
  o.power_trials = 40;
  return o;
}

TEST(Simulate, AbGateCatchesTenPercentAtOnePercentNoiseAndRarelyFailsAA) {
  const std::vector<SimulationRow> rows = Simulate(Small(), Policy{});
  ASSERT_EQ(rows.size(), 2u);  // A/B and history, one noise level each
  for (const SimulationRow& r : rows) {
    ASSERT_EQ(r.detection.size(), 1u);
    // 10 % at 1 % noise is 10 sigma: any working gate catches every one.
    EXPECT_GE(r.detection[0], 0.95) << ToString(r.mode);
    // A gate that fired on noise would fail most of 40 A/A gates.
    EXPECT_LE(r.false_alarm, 0.05) << ToString(r.mode);
  }
}

TEST(Simulate, AZeroToleranceGateWithoutCorrectionShowsFalseAlarms) {
  // The simulation must be able to show a bad gate as bad: with no tolerance
  // and a q of 50 %, noise alone fails many A/A gates.
  Policy loose;
  loose.tolerance = 0.0;
  loose.fdr = 0.5;
  const std::vector<SimulationRow> rows = Simulate(Small(), loose);
  EXPECT_GT(rows[0].false_alarm, 0.2);
}

TEST(Simulate, SameSeedSameTable) {
  SimulationOptions o = Small();
  o.aa_trials = 5;
  o.power_trials = 5;
  const std::string a = RenderSimulation(o, Policy{}, Simulate(o, Policy{}));
  const std::string b = RenderSimulation(o, Policy{}, Simulate(o, Policy{}));
  EXPECT_EQ(a, b);
  EXPECT_THAT(a, HasSubstr("| A/B | 1 % |"));
  EXPECT_THAT(a, HasSubstr("caught 10 %"));
}

}  // namespace
}  // namespace perfgate::gate
