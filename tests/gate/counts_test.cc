#include "gate/counts.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace perfgate::gate {
namespace {

// A case counted in one process per value: instructions per iteration.
CaseResult Counted(const std::vector<double>& per_process, const std::string& name = "BM_Work") {
  CaseResult c;
  c.benchmark = {"gbench", name, {{"a0", "200000"}}};
  c.metrics = {{"instructions", "instr/iter", Direction::kLowerIsBetter}};
  c.status = CaseStatus::kOk;
  for (double v : per_process) c.samples.push_back({static_cast<uint32_t>(c.samples.size()), {v}, false});
  return c;
}

// A timed verdict of the same case, as the time gate gives it.
MetricVerdict Timed(Verdict verdict, double change) {
  MetricVerdict v;
  v.benchmark = "gbench/BM_Work{a0=200000}";
  v.metric = "cpu_time";
  v.unit = "ns";
  v.verdict = verdict;
  v.change = change;
  v.method = Method::kBlocks;
  return v;
}

TEST(CountGate, PassesTheSameCountOnBothSides) {
  const GateResult r = JudgeCounts({Counted({2404360})}, {Counted({2404360})}, Policy{}, "cpu-x");
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kPass);
  EXPECT_EQ(r.verdicts[0].method, Method::kCount);
  EXPECT_DOUBLE_EQ(r.verdicts[0].change, 0);
  EXPECT_EQ(r.outcome, Outcome::kPass);
}

TEST(CountGate, CatchesOnePercentMoreInstructionsWithOneProcessASide) {
  const GateResult r = JudgeCounts({Counted({2404360})}, {Counted({2429607})}, Policy{}, "cpu-x");
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_NEAR(r.verdicts[0].change, 0.0105, 1e-4);
  EXPECT_DOUBLE_EQ(r.verdicts[0].tolerance, 0.005);
  EXPECT_EQ(r.outcome, Outcome::kRegression);
  EXPECT_NE(r.verdicts[0].note.find("beyond the count tolerance"), std::string::npos) << r.verdicts[0].note;
}

TEST(CountGate, PassesAChangeWithinTheCountTolerance) {
  const GateResult r = JudgeCounts({Counted({1000000})}, {Counted({1004000})}, Policy{}, "cpu-x");
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kPass);
}

TEST(CountGate, TakesItsToleranceFromThePolicy) {
  auto policy = ParsePolicy("version: 1\ndefaults:\n  count_tolerance: 2%\n", "p.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_DOUBLE_EQ(policy->count_tolerance, 0.02);
  const GateResult r = JudgeCounts({Counted({1000000})}, {Counted({1010500})}, *policy, "cpu-x");
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kPass);
}

TEST(CountGate, JudgesSimulatedMissesAgainstTheirOwnTolerance) {
  CaseResult base = Counted({1000000}), cand = Counted({1000000});
  for (CaseResult* c : {&base, &cand}) c->metrics.push_back({"sim_l1_misses", "misses/iter", Direction::kLowerIsBetter});
  base.samples[0].values.push_back(150);
  cand.samples[0].values.push_back(156);
  const GateResult r = JudgeCounts({base}, {cand}, Policy{}, "cpu-x");
  ASSERT_EQ(r.verdicts.size(), 2u);
  for (const MetricVerdict& v : r.verdicts) {
    EXPECT_EQ(v.verdict, Verdict::kPass) << v.metric;
    EXPECT_DOUBLE_EQ(v.tolerance, v.metric == "instructions" ? 0.005 : 0.10) << v.metric;
  }
  auto policy = ParsePolicy("version: 1\ndefaults:\n  sim_tolerance: 3%\n", "p.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  const GateResult strict = JudgeCounts({base}, {cand}, *policy, "cpu-x");
  EXPECT_EQ(strict.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_EQ(strict.verdicts[0].metric, "sim_l1_misses");
}

TEST(CountGate, RefusesACountToleranceWithoutAPercentSign) {
  auto policy = ParsePolicy("version: 1\ndefaults:\n  count_tolerance: 0.5\n", "p.yaml");
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("count_tolerance"), std::string::npos) << policy.status();
}

TEST(CountGate, CallsFewerInstructionsAnImprovement) {
  const GateResult r = JudgeCounts({Counted({1000000})}, {Counted({900000})}, Policy{}, "cpu-x");
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kImprovement);
}

TEST(CountGate, CallsProcessesOfOneSideThatDisagreeTooNoisy) {
  const GateResult r = JudgeCounts({Counted({1000000, 1020000})}, {Counted({1000000, 1000100})}, Policy{}, "cpu-x");
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kTooNoisy);
  EXPECT_EQ(r.verdicts[0].blocks, 2u);
}

TEST(CountGate, GivesTheRangeOfPairwiseChangesAsTheInterval) {
  const GateResult r = JudgeCounts({Counted({1000, 1001})}, {Counted({1010, 1012})}, Policy{}, "cpu-x");
  EXPECT_NEAR(r.verdicts[0].change_ci_low, 1010.0 / 1001 - 1, 1e-12);
  EXPECT_NEAR(r.verdicts[0].change_ci_high, 1012.0 / 1000 - 1, 1e-12);
}

TEST(CountGate, CallsACaseTheCandidateFailedMissingWithItsReason) {
  CaseResult failed = Counted({});
  failed.status = CaseStatus::kFailed;
  failed.reason = "exited with 1";
  const GateResult r = JudgeCounts({Counted({1000})}, {failed}, Policy{}, "cpu-x");
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kMissing);
  EXPECT_NE(r.verdicts[0].note.find("exited with 1"), std::string::npos);
  EXPECT_EQ(r.outcome, Outcome::kRegression);
}

TEST(CountGate, CallsACaseOnlyTheCandidateHasNoBaseline) {
  const GateResult r = JudgeCounts({}, {Counted({1000})}, Policy{}, "cpu-x");
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kNoBaseline);
}

// The time verdict of a case (`time`) once combined with its count going
// from 1000 to `count` instructions, and the combined outcome.
std::pair<MetricVerdict, Outcome> Combined(Verdict time, double count) {
  GateResult timed;
  timed.verdicts = {Timed(time, 0.05)};
  const GateResult counts = JudgeCounts({Counted({1000})}, {Counted({count})}, Policy{}, "cpu-x");
  const GateResult both = CombineWitnesses(timed, counts, Policy{}, "cpu-x");
  EXPECT_EQ(both.verdicts.size(), 2u);
  for (const MetricVerdict& v : both.verdicts) {
    if (v.metric == "cpu_time") return {v, both.outcome};
  }
  ADD_FAILURE() << "no time verdict";
  return {};
}

TEST(TwoWitnesses, CallATimeRegressionWithUnchangedCountsTheMachines) {
  const auto [time, outcome] = Combined(Verdict::kRegression, 1000);
  EXPECT_NE(time.note.find("the machine's"), std::string::npos) << time.note;
  EXPECT_EQ(outcome, Outcome::kRegression);
}

TEST(TwoWitnesses, CallACountRegressionWithUnchangedTimeCodeOffTheCriticalPath) {
  const auto [time, outcome] = Combined(Verdict::kPass, 1030);
  EXPECT_NE(time.note.find("not (yet) on the critical path"), std::string::npos) << time.note;
  EXPECT_EQ(outcome, Outcome::kRegression);
}

TEST(TwoWitnesses, CallBothMovingTheStrongestEvidence) {
  const auto [time, outcome] = Combined(Verdict::kRegression, 1030);
  EXPECT_NE(time.note.find("strongest evidence"), std::string::npos) << time.note;
}

TEST(TwoWitnesses, LetTheCountsSpeakWhereTimeCouldNotDecideYet) {
  const auto [time, outcome] = Combined(Verdict::kTooNoisy, 1300);
  EXPECT_NE(time.note.find("time could not decide yet, the counts did"), std::string::npos) << time.note;
  EXPECT_EQ(outcome, Outcome::kRegression);
}

TEST(TwoWitnesses, LeaveATimeVerdictOfAnotherCaseAlone) {
  GateResult time;
  MetricVerdict other = Timed(Verdict::kRegression, 0.08);
  other.benchmark = "gbench/BM_Other";
  time.verdicts = {other};
  const GateResult counts = JudgeCounts({Counted({1000})}, {Counted({1000})}, Policy{}, "cpu-x");
  const GateResult both = CombineWitnesses(time, counts, Policy{}, "cpu-x");
  EXPECT_EQ(both.verdicts[0].note, "");
}

// A run of `perfgate-agent run --count`: the case's timed samples, then a
// part with its count, one sample per counted process.
std::vector<CaseResult> TimedAndCounted(double ms, double instructions) {
  CaseResult timed;
  timed.benchmark = {"gbench", "BM_Work", {{"a0", "200000"}}};
  timed.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  timed.status = CaseStatus::kOk;
  for (uint32_t i = 0; i < 5; ++i) timed.samples.push_back({i, {ms * (1 + 0.01 * i)}, false});
  CaseResult counted = Counted({instructions});
  counted.samples[0].index = 5;
  return {timed, counted};
}

TEST(StoredCounts, ARunsTimeAndCountPartsJoinMetricByMetric) {
  const RunData run = RunDataFromCases("r", TimedAndCounted(10, 1000));
  ASSERT_EQ(run.metrics.size(), 2u);
  EXPECT_EQ(run.metrics[0].summary.metric, "time");
  EXPECT_EQ(run.metrics[0].samples.size(), 5u);
  EXPECT_DOUBLE_EQ(run.metrics[0].summary.median, 10.2);
  EXPECT_EQ(run.metrics[1].summary.metric, "instructions");
  EXPECT_EQ(run.metrics[1].samples, std::vector<double>{1000});
}

// In a history gate a counted metric is judged as a count, against the
// nearest baseline run (the first: same node first, newest first), not a
// median over runs of older code.
TEST(StoredCounts, AHistoryGateJudgesACountAgainstTheNearestBaselineRun) {
  auto gate = [](double candidate_instructions) {
    GateInput input;
    input.sku = "cpu-x";
    input.candidate = RunDataFromCases("cand", TimedAndCounted(10, candidate_instructions));
    input.baselines.push_back(RunDataFromCases("newest", TimedAndCounted(10, 1000)));
    for (int i = 0; i < 4; ++i) input.baselines.push_back(RunDataFromCases("older", TimedAndCounted(10, 900)));
    return EvaluateGate(input, Policy{});
  };
  auto instructions = [](const GateResult& r) {
    for (const MetricVerdict& v : r.verdicts) {
      if (v.metric == "instructions") return v;
    }
    ADD_FAILURE() << "no instructions verdict";
    return MetricVerdict{};
  };
  const MetricVerdict more = instructions(gate(1010));
  EXPECT_EQ(more.verdict, Verdict::kRegression) << more.note;
  EXPECT_EQ(more.method, Method::kCount);
  EXPECT_NEAR(more.change, 0.01, 1e-12);  // not +12 % against the older runs' 900
  EXPECT_DOUBLE_EQ(more.tolerance, Policy{}.count_tolerance);
  EXPECT_NE(more.note.find("nearest of 5 baseline runs"), std::string::npos) << more.note;
  EXPECT_EQ(instructions(gate(1002)).verdict, Verdict::kPass);
  EXPECT_EQ(instructions(gate(990)).verdict, Verdict::kImprovement);
}

}  // namespace
}  // namespace perfgate::gate
