// The adaptive A/B stop rule's side of the gate: which verdicts wait for
// more rounds, when the rule looks, and what a look judges with.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/stats.h"
#include "gate/gate.h"

namespace perfgate::gate {
namespace {

TEST(StopRule, WaitsOnUndecidedTooNoisyAndTooFewRunsOfGatingMetricsOnly) {
  MetricVerdict v;
  v.tolerance = 0.05;
  for (Verdict waits : {Verdict::kUndecided, Verdict::kTooNoisy, Verdict::kTooFewRuns}) {
    v.verdict = waits;
    EXPECT_TRUE(Undecided(v)) << ToString(waits);
  }
  // A pass has ruled a regression out (the gate gives no other), and a
  // regression is decided: neither waits for more rounds.
  for (Verdict decided : {Verdict::kPass, Verdict::kRegression, Verdict::kImprovement, Verdict::kMissing}) {
    v.verdict = decided;
    EXPECT_FALSE(Undecided(v)) << ToString(decided);
  }
  v.verdict = Verdict::kUndecided;
  v.gating = false;
  EXPECT_FALSE(Undecided(v));
}

TEST(StopRule, LooksEachTimeTheRoundsGrowByAQuarterAndAtTheLast) {
  std::vector<unsigned> at;
  for (unsigned r = 1; r <= 30; ++r) {
    if (StopRuleLooksAt(r, 5, 30)) at.push_back(r);
  }
  EXPECT_EQ(at, (std::vector<unsigned>{5, 7, 9, 12, 15, 19, 24, 30}));
  EXPECT_EQ(StopRuleLooks(5, 30), at.size());
  EXPECT_TRUE(StopRuleLooksAt(28, 5, 28));  // max_rounds off the schedule is a look
  EXPECT_EQ(StopRuleLooks(5, 28), 8u);
  EXPECT_EQ(StopRuleLooks(5, 5), 1u);
  EXPECT_EQ(StopRuleLooks(5, 3), 1u);  // a budget below min_rounds still looks once
}

TEST(StopRule, WithTheDefaultFortyFiveRoundsItLooksTenTimes) {
  std::vector<unsigned> at;
  for (unsigned r = 1; r <= 45; ++r) {
    if (StopRuleLooksAt(r, 5, 45)) at.push_back(r);
  }
  EXPECT_EQ(at, (std::vector<unsigned>{5, 7, 9, 12, 15, 19, 24, 30, 38, 45}));
  EXPECT_EQ(StopRuleLooks(5, 45), 10u);
}

TEST(StopRule, AnUndecidedCaseMeasuresOnWithTheRestOfItsBudgetWhenThatReachesALook) {
  // 25 rounds in 40 s of 60: the 20 s left reach the look at 30 (5 rounds of 1.6 s).
  EXPECT_DOUBLE_EQ(ExtensionBudget(60, 40, 25, 5, 45), 20);
  // 29 rounds in 59 s: the 1 s left cannot reach the look at 30.
  EXPECT_DOUBLE_EQ(ExtensionBudget(60, 59, 29, 5, 45), 0);
  // A case at its max_rounds, or with nothing left, or never measured, has none.
  EXPECT_DOUBLE_EQ(ExtensionBudget(60, 40, 45, 5, 45), 0);
  EXPECT_DOUBLE_EQ(ExtensionBudget(60, 61, 25, 5, 45), 0);
  EXPECT_DOUBLE_EQ(ExtensionBudget(60, 40, 0, 5, 45), 0);
  // Below min_rounds the next look is min_rounds itself.
  EXPECT_DOUBLE_EQ(ExtensionBudget(60, 30, 3, 5, 45), 30);
  EXPECT_DOUBLE_EQ(ExtensionBudget(60, 50, 3, 5, 45), 0);  // 2 rounds of 16.7 s do not fit in 10
}

TEST(StopRule, AConfirmationUndecidedAtItsBudgetMeasuresOnWithAsMuchTimeAgain) {
  // 20 rounds in 41.6 s: as much again, which reaches the looks at 24, 30 and 38.
  EXPECT_DOUBLE_EQ(ConfirmationExtensionBudget(41.6, 20, 5, 45), 41.6);
  EXPECT_DOUBLE_EQ(ConfirmationExtensionBudget(3, 5, 5, 45), 3);
  // At its max_rounds, or never measured, it has none.
  EXPECT_DOUBLE_EQ(ConfirmationExtensionBudget(41.6, 45, 5, 45), 0);
  EXPECT_DOUBLE_EQ(ConfirmationExtensionBudget(41.6, 0, 5, 45), 0);
  EXPECT_DOUBLE_EQ(ConfirmationExtensionBudget(0, 20, 5, 45), 0);
}

TEST(StopRule, AConfirmationGetsAtLeastTheRoundsOfTheFirstMeasurement) {
  // A first measurement that ended at its 40 s of 60 with 25 rounds: the
  // 20 s left would give the confirmation 12, so it gets the 25 (and one).
  EXPECT_NEAR(ConfirmationBudget(60, 40, 25, 5), 26 * 40.0 / 25, 1e-9);
  // One that decided in 10 s of 8 rounds: what it left is more than that.
  EXPECT_DOUBLE_EQ(ConfirmationBudget(60, 10, 8, 5), 50);
  // Never less than the rest of its share, nor than min_rounds and one.
  EXPECT_DOUBLE_EQ(ConfirmationBudget(60, 59, 0, 5), 20);
  EXPECT_NEAR(ConfirmationBudget(60, 50, 2, 5), 6 * 25.0, 1e-9);
}

// n processes of one sample each, spread evenly over center * (1 ± spread).
MetricData Processes(double center, double spread, unsigned n = 30) {
  MetricData m;
  m.summary.benchmark = "kernels/copy{bytes=1024}";
  m.summary.metric = "time";
  m.summary.unit = "ms";
  m.summary.direction = Direction::kLowerIsBetter;
  m.summary.status = CaseStatus::kOk;
  for (unsigned i = 0; i < n; ++i) {
    const unsigned j = (i * 7 + 3) % n;
    m.samples.push_back(center * (1.0 + spread * (-1.0 + 2.0 * j / (n - 1))));
  }
  m.summary.n = n;
  m.summary.median = m.summary.mean = stats::Median(m.samples);
  m.summary.noise = stats::Noise(m.samples);
  m.blocks = n;
  return m;
}

// Each look spends a Bonferroni share of both errors: q for a regression,
// the interval's 5 % for a pass. The wider interval is what a pass at a
// look must fit in.
TEST(StopRule, ALookJudgesAtAShareOfQAndAWiderInterval) {
  Policy policy;
  const Policy look = LookPolicy(policy, 4, 8);
  EXPECT_DOUBLE_EQ(look.fdr, policy.fdr / 32);
  EXPECT_DOUBLE_EQ(look.confidence, 1 - 0.05 / 8);
  GateInput in;
  in.mode = Mode::kAb;
  in.sku = "cpu";
  in.candidate.run_id = "candidate";
  in.candidate.metrics.push_back(Processes(10.12, 0.02));
  in.baselines.emplace_back();
  in.baselines.back().run_id = "baseline";
  in.baselines.back().metrics.push_back(Processes(10.0, 0.02));
  const GateResult full = EvaluateGate(in, policy), strict = EvaluateGate(in, look);
  ASSERT_EQ(full.verdicts.size(), 1u);
  ASSERT_EQ(strict.verdicts.size(), 1u);
  EXPECT_EQ(full.verdicts[0].verdict, Verdict::kPass) << full.verdicts[0].note;
  EXPECT_GT(strict.verdicts[0].change_ci_high, full.verdicts[0].change_ci_high);
}

}  // namespace
}  // namespace perfgate::gate
