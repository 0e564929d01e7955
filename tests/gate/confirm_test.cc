// The confirmation rule of history gates (docs/statistics.md, "History
// mode"): one candidate run beyond the tolerance is `unconfirmed`, never a
// regression; runs of the candidate's commit together decide, and only when
// every one of them is beyond the tolerance on its own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gate/gate.h"

namespace perfgate::gate {
namespace {

using ::testing::HasSubstr;

constexpr char kSgemm[] = "kernels/sgemm{k=512,m=512,n=512}";

// One run of one process: the gate sees its median.
RunData OneRun(const std::string& id, double median_ms) {
  MetricData m;
  m.summary.benchmark = kSgemm;
  m.summary.metric = "time";
  m.summary.unit = "ms";
  m.summary.direction = Direction::kLowerIsBetter;
  m.summary.n = 20;
  m.summary.median = m.summary.mean = median_ms;
  m.summary.status = CaseStatus::kOk;
  RunData r;
  r.run_id = id;
  r.metrics.push_back(m);
  return r;
}

// A history of five runs that move by about 0.7 % from run to run, and a
// candidate whose runs have the given medians (the first is the one gated).
GateInput History(const std::vector<double>& candidate_ms) {
  GateInput in;
  in.mode = Mode::kHistory;
  in.sku = "cpu-test";
  int k = 0;
  for (double ms : {10.0, 10.1, 9.9, 10.05, 9.95}) in.baselines.push_back(OneRun("base-" + std::to_string(k++), ms));
  in.candidate = OneRun("candidate", candidate_ms.front());
  for (size_t i = 1; i < candidate_ms.size(); ++i) {
    in.candidate_repeats.push_back(OneRun("again-" + std::to_string(i), candidate_ms[i]));
  }
  return in;
}

Policy Tolerance(double t) {
  Policy p;
  p.tolerance = t;
  return p;
}

TEST(HistoryConfirmation, OneRunSlowedByABurstIsUnconfirmedNotARegression) {
  // +30 % on one run, far outside the history's spread: what a neighbour
  // over the whole run gives as surely as a regression does.
  const GateResult r = EvaluateGate(History({13.0}), Tolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  const MetricVerdict& v = r.verdicts[0];
  EXPECT_EQ(v.verdict, Verdict::kUnconfirmed);
  EXPECT_STREQ(ToString(v.verdict), "unconfirmed");
  EXPECT_LT(v.p_adjusted, 0.01);  // significant: it would have been a regression
  EXPECT_NEAR(v.change, 0.30, 1e-3);  // against the runs' geometric mean
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
  EXPECT_TRUE(Inconclusive(v.verdict));
  EXPECT_FALSE(Fails(v.verdict));
  // The note says exactly what to run, naming the case.
  EXPECT_THAT(v.note, HasSubstr("perfgate-agent run with the same --branch and --commit"));
  EXPECT_THAT(v.note, HasSubstr(std::string("--filter '") + kSgemm + "'"));
  EXPECT_THAT(r.summary, HasSubstr("unconfirmed"));
}

TEST(HistoryConfirmation, TwoRunsThatBothRegressAreARegression) {
  const GateResult r = EvaluateGate(History({13.0, 13.1}), Tolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  const MetricVerdict& v = r.verdicts[0];
  EXPECT_EQ(v.verdict, Verdict::kRegression);
  EXPECT_EQ(v.candidate_runs, 2u);
  EXPECT_DOUBLE_EQ(v.candidate_median, 13.05);  // the median of the runs' medians
  EXPECT_EQ(v.candidate_samples, 40u);
  EXPECT_THAT(v.note, HasSubstr("2 candidate runs against 5 runs"));
  EXPECT_EQ(r.outcome, Outcome::kRegression);
}

TEST(HistoryConfirmation, TwoRunsWhereOneIsCleanAreNotARegression) {
  // The burst-hit run and a clean one: their spread alone makes the
  // change insignificant.
  const GateResult r = EvaluateGate(History({13.0, 10.02}), Tolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_NE(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_NE(r.outcome, Outcome::kRegression);
}

TEST(HistoryConfirmation, EveryRunMustBeBeyondTheToleranceOnItsOwn) {
  // +30 % and +15 % at a 20 % tolerance: together significant and beyond
  // it (about +22 %), but the second run is within it.
  const GateResult r = EvaluateGate(History({13.0, 11.5}), Tolerance(0.20));
  ASSERT_EQ(r.verdicts.size(), 1u);
  const MetricVerdict& v = r.verdicts[0];
  EXPECT_LT(v.p_adjusted, 0.01);
  EXPECT_GT(v.change, 0.20);
  EXPECT_EQ(v.verdict, Verdict::kUnconfirmed);
  EXPECT_THAT(v.note, HasSubstr("run 2 +15.0 %"));
  EXPECT_THAT(v.note, HasSubstr("of the candidate's 2 runs (run 1 the one gated) is within the tolerance"));
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
}

TEST(HistoryConfirmation, ARunWhoseBestSampleDidNotMoveDoesNotConfirm) {
  // Both runs' medians +30 %, but the first run's fastest sample is where
  // the history is: a neighbour slowed most of that run, not all of it. A
  // real slowdown moves every sample.
  GateInput in = History({13.0, 13.1});
  in.candidate.metrics[0].summary.min = 10.05;
  in.candidate.metrics[0].summary.max = 13.9;
  in.candidate_repeats[0].metrics[0].summary.min = 12.8;
  in.candidate_repeats[0].metrics[0].summary.max = 13.6;
  const GateResult r = EvaluateGate(in, Tolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kUnconfirmed);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("in its best sample, run 1 +0.5 %"));
  // The same runs with the first one slowed throughout: a regression.
  in.candidate.metrics[0].summary.min = 12.7;
  EXPECT_EQ(EvaluateGate(in, Tolerance(0.03)).verdicts[0].verdict, Verdict::kRegression);
}

TEST(HistoryConfirmation, AnImprovementOnOneRunStaysAnImprovement) {
  // Interference only ever slows: one faster run does not block, and is
  // reported as it is.
  const GateResult r = EvaluateGate(History({8.0}), Tolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kImprovement);
  EXPECT_EQ(r.outcome, Outcome::kPass);
}

TEST(HistoryConfirmation, RunsOfAnotherUnitDoNotJoinTheCandidate) {
  GateInput in = History({13.0, 13.1});
  in.candidate_repeats[0].metrics[0].summary.unit = "us";  // another metric under that name
  const GateResult r = EvaluateGate(in, Tolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].candidate_runs, 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kUnconfirmed);
}

TEST(HistoryConfirmation, AnAbGateIsNotAffected) {
  // The rule is the history gate's: an A/B gate of two blocked sides
  // decides on its rounds (and confirms by measuring again itself).
  GateInput in = History({13.0});
  in.mode = Mode::kAb;
  in.baselines.resize(1);
  in.calibrations[{kSgemm, "time"}] = {0.005, 20, "node n1"};
  const GateResult r = EvaluateGate(in, Tolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
}

}  // namespace
}  // namespace perfgate::gate
