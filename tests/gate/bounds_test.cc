// A side that could only bound a metric (a knee beyond the swept rates)
// against a side that measured it: the verdict follows the end of the
// change the bound fixes, and a pass needs the worse end within the
// tolerance (gate/bounds.cc).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gate/gate.h"

namespace perfgate::gate {
namespace {

constexpr char kMetric[] = "knee_rate";

CaseResult Knee(double value, Direction direction = Direction::kHigherIsBetter) {
  CaseResult c;
  c.benchmark = {"inference", "serve_knee", {{"kv_blocks", "64"}}};
  c.metrics = {{kMetric, "requests/s", direction}};
  c.status = CaseStatus::kOk;
  c.samples = {{0, {value}, false}};
  return c;
}

CaseResult Bounded(ValueBound::Kind kind, double value, Direction direction = Direction::kHigherIsBetter) {
  CaseResult c = Knee(0, direction);
  c.samples.clear();
  c.status = CaseStatus::kSkipped;
  c.reason = "knee beyond the swept range";
  c.bound = ValueBound{kMetric, kind, value};
  return c;
}

// The one verdict of a candidate against five baseline runs, 5 % tolerance,
// as an A/B gate judges (history's single runs: HistoryJudge below).
MetricVerdict Judge(const CaseResult& candidate, const CaseResult& baseline, Mode mode = Mode::kAb,
                    const std::vector<CaseResult>& repeats = {}) {
  GateInput input;
  input.sku = "cpu-test";
  input.mode = mode;
  for (const CaseResult& r : repeats) input.candidate_repeats.push_back(RunDataFromCases("repeat", {r}));
  input.candidate = RunDataFromCases("candidate", {candidate});
  for (int i = 0; i < 5; ++i) input.baselines.push_back(RunDataFromCases("base" + std::to_string(i), {baseline}));
  Policy policy;
  policy.tolerance = 0.05;
  const GateResult r = EvaluateGate(input, policy);
  EXPECT_EQ(r.verdicts.size(), 1u);
  return r.verdicts.empty() ? MetricVerdict{} : r.verdicts[0];
}

constexpr auto kAtLeast = ValueBound::Kind::kAtLeast;
constexpr auto kAtMost = ValueBound::Kind::kAtMost;

TEST(Bounds, AKneeThatRoseAboveTheSweptRatesIsAnImprovementNotAMissingCase) {
  const MetricVerdict v = Judge(Bounded(kAtLeast, 3400), Knee(2400));
  EXPECT_EQ(v.verdict, Verdict::kImprovement) << v.note;
  EXPECT_NEAR(v.change, 1 - 3400.0 / 2400, 1e-12);
  EXPECT_NE(v.note.find("candidate at least 3400 requests/s (knee beyond the swept range) against 2400"),
            std::string::npos)
      << v.note;
}

TEST(Bounds, ACandidateBoundPassesOnlyWhenItsWorseEndIsWithinTheTolerance) {
  // At least 2300 against 2400: at worst 4.2 % lower, within 5 %.
  EXPECT_EQ(Judge(Bounded(kAtLeast, 2300), Knee(2400)).verdict, Verdict::kPass);
  // At least 2000: it could be 16.7 % lower; nothing rules that out.
  const MetricVerdict v = Judge(Bounded(kAtLeast, 2000), Knee(2400));
  EXPECT_EQ(v.verdict, Verdict::kUndecided) << v.note;
  EXPECT_NE(v.note.find("sweep rates past the bound"), std::string::npos) << v.note;
}

// Baseline runs at 2400 and 2600 (median 2500): a candidate at least 2450
// is at worst 2 % below the median but 5.8 % below the faster run, so no
// pass; one at most 2300 is 8 % below the median but only 4.2 % below the
// slower run, so no regression either.
TEST(Bounds, EveryBaselineRunMustAgreeBeforeABoundPassesOrFails) {
  GateInput input;
  input.sku = "cpu-test";
  input.mode = Mode::kAb;
  for (double knee : {2400.0, 2600.0}) input.baselines.push_back(RunDataFromCases("base", {Knee(knee)}));
  Policy policy;
  policy.tolerance = 0.05;
  auto verdict = [&](const CaseResult& candidate) {
    input.candidate = RunDataFromCases("candidate", {candidate});
    const GateResult r = EvaluateGate(input, policy);
    return r.verdicts.empty() ? Verdict::kMissing : r.verdicts[0].verdict;
  };
  EXPECT_EQ(verdict(Bounded(kAtLeast, 2450)), Verdict::kUndecided);
  EXPECT_EQ(verdict(Bounded(kAtLeast, 2500)), Verdict::kPass);  // at worst 3.8 % below 2600
  EXPECT_EQ(verdict(Bounded(kAtMost, 2300)), Verdict::kUndecided);
  EXPECT_EQ(verdict(Bounded(kAtMost, 2200)), Verdict::kRegression);  // at least 8.3 % below 2400
}

TEST(Bounds, AKneeThatFellBelowTheSweptRatesIsARegressionOnlyWhenTheBoundShowsOne) {
  // Below 1000 against 2400: worse by at least 58 %.
  const MetricVerdict fell = Judge(Bounded(kAtMost, 1000), Knee(2400));
  EXPECT_EQ(fell.verdict, Verdict::kRegression) << fell.note;
  EXPECT_NEAR(fell.change, 1 - 1000.0 / 2400, 1e-12);
  // Below 2390 against 2400: worse, by at least 0.4 %: not shown beyond 5 %.
  EXPECT_EQ(Judge(Bounded(kAtMost, 2390), Knee(2400)).verdict, Verdict::kUndecided);
}

TEST(Bounds, ABaselineBoundJudgesTheCandidatesValueFromTheOtherSide) {
  // The baseline's knee was above 3400; the candidate's is 2400: 29 % worse at least.
  EXPECT_EQ(Judge(Knee(2400), Bounded(kAtLeast, 3400)).verdict, Verdict::kRegression);
  // Above 2450 and now 2400: at least 2 % worse, maybe far more.
  EXPECT_EQ(Judge(Knee(2400), Bounded(kAtLeast, 2450)).verdict, Verdict::kUndecided);
  // The baseline's knee was below 1000; the candidate's is 2400.
  EXPECT_EQ(Judge(Knee(2400), Bounded(kAtMost, 1000)).verdict, Verdict::kImprovement);
  // Below 2450 and now 2400: at worst 2 % lower.
  EXPECT_EQ(Judge(Knee(2400), Bounded(kAtMost, 2450)).verdict, Verdict::kPass);
}

TEST(Bounds, ALowerIsBetterMetricTurnsTheEndsAround) {
  constexpr auto lower = Direction::kLowerIsBetter;
  // At most 90 against 100: at worst 10 % less, an improvement.
  EXPECT_EQ(Judge(Bounded(kAtMost, 90, lower), Knee(100, lower)).verdict, Verdict::kImprovement);
  // At least 120 against 100: worse by at least 20 %.
  EXPECT_EQ(Judge(Bounded(kAtLeast, 120, lower), Knee(100, lower)).verdict, Verdict::kRegression);
  // At least 98: anything from 2 % better up.
  EXPECT_EQ(Judge(Bounded(kAtLeast, 98, lower), Knee(100, lower)).verdict, Verdict::kUndecided);
}

TEST(Bounds, InHistoryABoundsRegressionWaitsForTheCommitsFurtherRunsToShowIt) {
  const MetricVerdict one = Judge(Bounded(kAtMost, 1000), Knee(2400), Mode::kHistory);
  EXPECT_EQ(one.verdict, Verdict::kUnconfirmed) << one.note;
  EXPECT_EQ(Judge(Bounded(kAtMost, 1000), Knee(2400), Mode::kHistory, {Bounded(kAtMost, 1000)}).verdict,
            Verdict::kRegression);
  EXPECT_EQ(Judge(Bounded(kAtMost, 1000), Knee(2400), Mode::kHistory, {Knee(1900)}).verdict, Verdict::kRegression);
  // A further run at the baseline's level: not confirmed.
  EXPECT_EQ(Judge(Bounded(kAtMost, 1000), Knee(2400), Mode::kHistory, {Knee(2400)}).verdict,
            Verdict::kUnconfirmed);
  // From the baseline's side alike.
  EXPECT_EQ(Judge(Knee(2400), Bounded(kAtLeast, 3400), Mode::kHistory).verdict, Verdict::kUnconfirmed);
  EXPECT_EQ(Judge(Knee(2400), Bounded(kAtLeast, 3400), Mode::kHistory, {Knee(2300)}).verdict,
            Verdict::kRegression);
  // An improvement or a pass needs no confirmation.
  EXPECT_EQ(Judge(Bounded(kAtLeast, 3400), Knee(2400), Mode::kHistory).verdict, Verdict::kImprovement);
}

TEST(Bounds, BoundsOnBothSidesJudgeNothing) {
  GateInput input;
  input.sku = "cpu-test";
  input.candidate = RunDataFromCases("candidate", {Bounded(kAtLeast, 3400)});
  input.baselines.push_back(RunDataFromCases("base", {Bounded(kAtLeast, 3400)}));
  EXPECT_TRUE(EvaluateGate(input, Policy{}).verdicts.empty());
}

}  // namespace
}  // namespace perfgate::gate
