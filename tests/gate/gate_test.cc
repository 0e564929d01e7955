#include "gate/gate.h"
#include "gate/gate_internal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/stats.h"

namespace perfgate::gate {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSku[] = "h100-sxm5-80gb";
constexpr char kCopy[] = "kernels/copy{bytes=268435456}";
constexpr char kTriad[] = "kernels/triad{n=67108864}";
constexpr char kGemm[] = "kernels/gemm{dtype=bf16,k=8192,m=8192,n=8192}";

// A metric known only by its summary (a run stored before samples were kept,
// or a file with aggregates): the gate can apply no test to it.
MetricData Summary(const std::string& benchmark, const std::string& metric, double median,
                   Direction direction = Direction::kLowerIsBetter, uint32_t n = 20) {
  MetricData m;
  MetricSummary& s = m.summary;
  s.benchmark = benchmark;
  s.metric = metric;
  s.unit = direction == Direction::kLowerIsBetter ? "ms" : "GB/s";
  s.direction = direction;
  s.n = n;
  s.median = s.mean = s.min = s.max = median;
  s.status = CaseStatus::kOk;
  return m;
}

// A metric with samples spread evenly around `center`: center * (1 + spread * u)
// for n values of u evenly spaced over [-1, 1], in a fixed shuffled order.
MetricData Samples(const std::string& benchmark, const std::string& metric, double center,
                   double spread, unsigned n = 30,
                   Direction direction = Direction::kLowerIsBetter) {
  MetricData m = Summary(benchmark, metric, center, direction, n);
  for (unsigned i = 0; i < n; ++i) {
    const unsigned j = (i * 7 + 3) % n;  // 7 is coprime with the n used here
    const double u = n == 1 ? 0.0 : -1.0 + 2.0 * j / (n - 1);
    m.samples.push_back(center * (1.0 + spread * u));
  }
  m.summary.median = stats::Median(m.samples);
  m.summary.noise = stats::Noise(m.samples);
  return m;
}

// As Samples, each sample from a process of its own (n processes of one
// sample): the gate counts them as processes.
MetricData Processes(const std::string& benchmark, const std::string& metric, double center,
                     double spread, unsigned n = 30,
                     Direction direction = Direction::kLowerIsBetter) {
  MetricData m = Samples(benchmark, metric, center, spread, n, direction);
  m.blocks = n;
  return m;
}

RunData Run(std::vector<MetricData> metrics, std::string id = "run") {
  RunData r;
  r.run_id = std::move(id);
  r.metrics = std::move(metrics);
  return r;
}

// A calibration so tight that the tolerance alone decides: one run a side
// then has a run-to-run spread to be judged against.
constexpr double kTightSpread = 1e-4;

// The gate's input; unless `calibrated` is false, the node is calibrated
// with kTightSpread for every metric, so that runs of one process are
// judged by their change against the tolerance.
GateInput Input(std::vector<MetricData> candidate, std::vector<std::vector<MetricData>> baselines,
                Mode mode = Mode::kHistory, bool calibrated = true) {
  GateInput in;
  in.mode = mode;
  in.sku = kSku;
  in.candidate = Run(std::move(candidate), "candidate");
  for (auto& b : baselines) in.baselines.push_back(Run(std::move(b), "baseline"));
  if (calibrated) {
    for (const RunData* r : {&in.candidate}) {
      for (const MetricData& m : r->metrics) {
        in.calibrations[{m.summary.benchmark, m.summary.metric}] = {kTightSpread, 30, "node n1"};
      }
    }
    for (const RunData& r : in.baselines) {
      for (const MetricData& m : r.metrics) {
        in.calibrations[{m.summary.benchmark, m.summary.metric}] = {kTightSpread, 30, "node n1"};
      }
    }
  }
  return in;
}

// A history gate whose candidate commit ran twice alike: the second run
// confirms what the first shows (a single run's regression is only
// unconfirmed; tests/gate/confirm_test.cc).
GateInput Confirmed(GateInput in) {
  if (in.mode == Mode::kHistory) in.candidate_repeats.push_back(in.candidate);
  return in;
}

Policy PolicyWithTolerance(double tolerance) {
  Policy p;
  p.tolerance = tolerance;
  return p;
}

// Judges one metric alone, on a node calibrated with kTightSpread, over two
// alike runs of the candidate (Confirmed).
MetricVerdict DecideOne(std::optional<MetricData> candidate, std::vector<MetricData> baseline,
                        double tolerance, std::optional<double> floor = std::nullopt) {
  std::vector<MetricData> cand;
  if (candidate) cand.push_back(*candidate);
  std::vector<std::vector<MetricData>> runs;
  for (MetricData& b : baseline) runs.push_back({b});
  Policy policy = PolicyWithTolerance(tolerance);
  if (floor) {
    PolicyRule rule;
    rule.floor = floor;
    policy.rules.push_back(rule);
  }
  GateResult r = EvaluateGate(Confirmed(Input(cand, runs)), policy);
  EXPECT_EQ(r.verdicts.size(), 1u);
  return r.verdicts.empty() ? MetricVerdict{} : r.verdicts.front();
}

TEST(GateDecider, LowerIsBetterMetric25PercentSlowerRegressesAtTenPercentTolerance) {
  const MetricData candidate = Summary(kCopy, "time", 12.5);
  const MetricVerdict v = DecideOne(candidate, {Summary(kCopy, "time", 10.0)}, 0.10);
  EXPECT_EQ(v.verdict, Verdict::kRegression);
  EXPECT_NEAR(v.change, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(v.baseline_median, 10.0);
  EXPECT_DOUBLE_EQ(v.candidate_median, 12.5);
  EXPECT_EQ(v.baseline_runs, 1u);
  EXPECT_EQ(v.candidate_samples, 40u);  // two runs of 20
  EXPECT_EQ(v.method, Method::kCalibrated);  // one run a side: the calibration's spread
  EXPECT_THAT(v.note, HasSubstr("median 12.5 ms vs 10 ms, +25.0 %"));
  EXPECT_THAT(v.note, HasSubstr("against 1 run, run-to-run spread from the calibration of node n1"));
  EXPECT_THAT(v.note, HasSubstr("worse than the tolerance of 10.0 %"));
}

TEST(GateDecider, LowerIsBetterMetricWithinTwoPercentPasses) {
  const MetricData candidate = Summary(kCopy, "time", 10.15);
  const MetricVerdict v = DecideOne(candidate, {Summary(kCopy, "time", 10.0)}, 0.02);
  EXPECT_EQ(v.verdict, Verdict::kPass);
  EXPECT_NEAR(v.change, 0.015, 1e-12);
  EXPECT_THAT(v.note, HasSubstr("within the tolerance of 2.0 %"));
}

TEST(GateDecider, LowerIsBetterMetricMuchFasterIsAnImprovement) {
  const MetricData candidate = Summary(kCopy, "time", 8.0);
  const MetricVerdict v = DecideOne(candidate, {Summary(kCopy, "time", 10.0)}, 0.05);
  EXPECT_EQ(v.verdict, Verdict::kImprovement);
  EXPECT_NEAR(v.change, -0.2, 1e-12);
  EXPECT_THAT(v.note, HasSubstr("-20.0 %"));
  EXPECT_THAT(v.note, HasSubstr("against 1 run, run-to-run spread from the calibration of node n1; better by more than the tolerance"));
}

TEST(GateDecider, HigherIsBetterMetricThatDropsRegresses) {
  const MetricData candidate = Summary(kTriad, "bandwidth", 12.0, Direction::kHigherIsBetter);
  const MetricVerdict v = DecideOne(candidate, {Summary(kTriad, "bandwidth", 16.0, Direction::kHigherIsBetter)}, 0.10);
  EXPECT_EQ(v.verdict, Verdict::kRegression);
  EXPECT_NEAR(v.change, 0.25, 1e-12);  // positive means worse whatever the direction
  EXPECT_THAT(v.note, HasSubstr("GB/s"));
}

TEST(GateDecider, HigherIsBetterMetricThatRisesImproves) {
  const MetricData candidate = Summary(kTriad, "bandwidth", 20.0, Direction::kHigherIsBetter);
  const MetricVerdict v = DecideOne(candidate, {Summary(kTriad, "bandwidth", 16.0, Direction::kHigherIsBetter)}, 0.10);
  EXPECT_EQ(v.verdict, Verdict::kImprovement);
  EXPECT_NEAR(v.change, -0.25, 1e-12);
}

TEST(GateDecider, HigherIsBetterMetricBelowFloorFailsEvenWithinTolerance) {
  const MetricData candidate = Summary(kGemm, "tflops", 690, Direction::kHigherIsBetter);
  const MetricVerdict v = DecideOne(candidate, {Summary(kGemm, "tflops", 695, Direction::kHigherIsBetter)}, 0.05, 700);
  EXPECT_EQ(v.verdict, Verdict::kBelowFloor);
  EXPECT_DOUBLE_EQ(v.floor, 700);
  EXPECT_THAT(v.note, HasSubstr("below the floor of 700"));
}

TEST(GateDecider, HigherIsBetterMetricAboveFloorPasses) {
  const MetricData candidate = Summary(kGemm, "tflops", 710, Direction::kHigherIsBetter);
  const MetricVerdict v = DecideOne(candidate, {Summary(kGemm, "tflops", 712, Direction::kHigherIsBetter)}, 0.05, 700);
  EXPECT_EQ(v.verdict, Verdict::kPass);
}

TEST(GateDecider, LowerIsBetterFloorIsACeiling) {
  const MetricData slow = Summary(kCopy, "time", 5.2);
  const MetricVerdict over = DecideOne(slow, {Summary(kCopy, "time", 5.1)}, 0.05, 5.0);
  EXPECT_EQ(over.verdict, Verdict::kBelowFloor);
  EXPECT_THAT(over.note, HasSubstr("above the ceiling of 5 ms"));

  const MetricData fast = Summary(kCopy, "time", 4.9);
  EXPECT_EQ(DecideOne(fast, {Summary(kCopy, "time", 4.9)}, 0.05, 5.0).verdict,
            Verdict::kPass);
}

TEST(GateDecider, FloorIsCheckedWithoutBaseline) {
  const MetricData candidate = Summary(kGemm, "tflops", 650, Direction::kHigherIsBetter);
  EXPECT_EQ(DecideOne(candidate, {}, 0.03, 700).verdict, Verdict::kBelowFloor);
  const MetricData good = Summary(kGemm, "tflops", 750, Direction::kHigherIsBetter);
  EXPECT_EQ(DecideOne(good, {}, 0.03, 700).verdict, Verdict::kNoBaseline);
}

TEST(GateDecider, CandidateWithoutMetricIsMissing) {
  const MetricVerdict v = DecideOne(std::nullopt, {Summary(kCopy, "time", 10.0)}, 0.03);
  EXPECT_EQ(v.verdict, Verdict::kMissing);
  EXPECT_TRUE(std::isnan(v.candidate_median));
  EXPECT_DOUBLE_EQ(v.baseline_median, 10.0);
  EXPECT_THAT(v.note, HasSubstr("absent from the candidate"));
}

TEST(GateDecider, CandidateWithOnlyThrottledSamplesIsAnInvalidEnvironment) {
  MetricData candidate = Summary(kCopy, "time", 0.0, Direction::kLowerIsBetter, 0);
  candidate.summary.n_throttled = 12;
  candidate.summary.status = CaseStatus::kTimedOut;
  const MetricVerdict v = DecideOne(candidate, {Summary(kCopy, "time", 10.0)}, 0.03);
  EXPECT_EQ(v.verdict, Verdict::kInvalidEnvironment);
  EXPECT_THAT(v.note, HasSubstr("all 12 samples of the candidate were throttled"));
}

TEST(EvaluateGate, ACaseSkippedOnBothSidesIsLeftOut) {
  MetricData skipped = Summary(kGemm, "tflops", 0.0, Direction::kHigherIsBetter, 0);
  skipped.summary.status = CaseStatus::kSkipped;
  skipped.summary.reason = "no CUDA device";
  const GateResult r = EvaluateGate(
      Input({skipped, Summary(kCopy, "time", 10.0)}, {{skipped, Summary(kCopy, "time", 10.0)}}),
      PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].benchmark, kCopy);
  EXPECT_EQ(r.outcome, Outcome::kPass);
}

TEST(EvaluateGate, ACaseThatRanInTheBaselineButSkipsNowIsMissing) {
  MetricData skipped = Summary(kGemm, "tflops", 0.0, Direction::kHigherIsBetter, 0);
  skipped.summary.status = CaseStatus::kSkipped;
  const GateResult r =
      EvaluateGate(Input({skipped}, {{Summary(kGemm, "tflops", 700, Direction::kHigherIsBetter)}}),
                   PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kMissing);
  EXPECT_EQ(r.outcome, Outcome::kRegression);
}

TEST(GateDecider, MetricWithoutBaselineRunsHasNoBaseline) {
  const MetricData candidate = Summary(kCopy, "time", 10.0);
  const MetricVerdict v = DecideOne(candidate, {}, 0.03);
  EXPECT_EQ(v.verdict, Verdict::kNoBaseline);
  EXPECT_EQ(v.baseline_runs, 0u);
  EXPECT_TRUE(std::isnan(v.change));
}

TEST(GateDecider, BaselineRunsWithoutSamplesAreIgnored) {
  const MetricData candidate = Summary(kCopy, "time", 10.0);
  const MetricVerdict v = DecideOne(candidate, {Summary(kCopy, "time", 1.0, Direction::kLowerIsBetter, 0)}, 0.03);
  EXPECT_EQ(v.verdict, Verdict::kNoBaseline);
}

TEST(GateDecider, ZeroBaselineDoesNotDivideByZero) {
  const MetricData candidate = Summary(kCopy, "errors", 1.0);
  const MetricVerdict v = DecideOne(candidate, {Summary(kCopy, "errors", 0.0)}, 0.03);
  EXPECT_EQ(v.verdict, Verdict::kNoBaseline);
  EXPECT_TRUE(std::isnan(v.change));
  EXPECT_THAT(v.note, HasSubstr("baseline of 0"));
}

TEST(GateDecider, BaselineIsMedianOfRunMediansOverThreeRuns) {
  const MetricData candidate = Summary(kCopy, "time", 10.5);
  // Mean of the medians would be 14; their median is 10.
  const GateResult r = EvaluateGate(
      Input({candidate},
            {{Summary(kCopy, "time", 22.0)}, {Summary(kCopy, "time", 10.0)}, {Summary(kCopy, "time", 10.0)}},
            Mode::kHistory, /*calibrated=*/false),
      PolicyWithTolerance(0.10));
  ASSERT_EQ(r.verdicts.size(), 1u);
  const MetricVerdict& v = r.verdicts[0];
  EXPECT_DOUBLE_EQ(v.baseline_median, 10.0);
  EXPECT_EQ(v.baseline_runs, 3u);
  // One run at 22 makes the between-run noise huge: no 10 % change could be
  // told from it, and the gate says so rather than passing.
  EXPECT_EQ(v.verdict, Verdict::kTooNoisy);
  EXPECT_EQ(v.method, Method::kHistory);
  EXPECT_THAT(v.note, HasSubstr("against 3 runs"));
}

TEST(GateDecider, BaselineOfTwoRunsIsTheirMean) {
  const MetricData candidate = Summary(kCopy, "time", 12.0);
  const MetricVerdict v = DecideOne(candidate, {Summary(kCopy, "time", 10.0), Summary(kCopy, "time", 14.0)}, 0.1);
  EXPECT_DOUBLE_EQ(v.baseline_median, 12.0);
}

TEST(GateVerdict, NamesAreLowerCase) {
  EXPECT_STREQ(ToString(Verdict::kBelowFloor), "below_floor");
  EXPECT_STREQ(ToString(Verdict::kNoBaseline), "no_baseline");
  EXPECT_STREQ(ToString(Verdict::kRegression), "regression");
}

TEST(EvaluateGate, GatingRegressionFailsTheGate) {
  const GateResult r =
      EvaluateGate(Confirmed(Input({Summary(kCopy, "time", 12.5)}, {{Summary(kCopy, "time", 10.0)}})),
                   PolicyWithTolerance(0.10));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_TRUE(r.outcome == Outcome::kRegression);
  EXPECT_THAT(r.summary, HasSubstr("1 of 1 metric"));
  EXPECT_THAT(r.summary, HasSubstr(kCopy));
  EXPECT_THAT(r.summary, HasSubstr("25.0 % worse"));
}

TEST(EvaluateGate, AdvisoryRegressionDoesNotFailTheGate) {
  Policy policy = PolicyWithTolerance(0.10);
  policy.gating = false;
  const GateResult r =
      EvaluateGate(Confirmed(Input({Summary(kCopy, "time", 12.5)}, {{Summary(kCopy, "time", 10.0)}})), policy);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_FALSE(r.verdicts[0].gating);
  EXPECT_FALSE(r.outcome == Outcome::kRegression);
  EXPECT_THAT(r.summary, HasSubstr("no gating metric regressed"));
  EXPECT_THAT(r.summary, HasSubstr("1 advisory metric"));
}

TEST(EvaluateGate, MetricOnlyInBaselineIsMissingAndFailsTheGate) {
  const GateResult r = EvaluateGate(Input({Summary(kCopy, "time", 10.0)},
                                    {{Summary(kCopy, "time", 10.0), Summary(kTriad, "time", 3.0)}}),
                                    PolicyWithTolerance(0.05));
  ASSERT_EQ(r.verdicts.size(), 2u);
  EXPECT_EQ(r.verdicts[0].benchmark, kTriad);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kMissing);
  EXPECT_EQ(r.verdicts[0].unit, "ms");  // described from the baseline run
  EXPECT_TRUE(r.outcome == Outcome::kRegression);
  EXPECT_THAT(r.summary, HasSubstr("missing"));
}

TEST(EvaluateGate, MetricOnlyInCandidateHasNoBaselineAndPasses) {
  const GateResult r = EvaluateGate(Input({Summary(kCopy, "time", 10.0), Summary(kTriad, "time", 3.0)},
      {{Summary(kCopy, "time", 10.0)}}), PolicyWithTolerance(0.05));
  ASSERT_EQ(r.verdicts.size(), 2u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kNoBaseline);
  EXPECT_EQ(r.verdicts[1].verdict, Verdict::kPass);
  EXPECT_FALSE(r.outcome == Outcome::kRegression);
}

TEST(EvaluateGate, BaselineMedianSpansRunsAndSkipsRunsWithoutTheMetric) {
  const GateResult r = EvaluateGate(Input({Summary(kCopy, "time", 10.0)},
                                    {{Summary(kCopy, "time", 9.0)},
                                     {Summary(kTriad, "time", 1.0)},
                                     {Summary(kCopy, "time", 11.0)},
                                     {Summary(kCopy, "time", 10.0)}}),
                                    PolicyWithTolerance(0.05));
  const MetricVerdict* copy = nullptr;
  for (const MetricVerdict& v : r.verdicts) {
    if (v.benchmark == kCopy) copy = &v;
  }
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->baseline_runs, 3u);
  EXPECT_DOUBLE_EQ(copy->baseline_median, 10.0);
}

TEST(EvaluateGate, PolicyRuleForTheSkuIsApplied) {
  absl::StatusOr<Policy> policy = ParsePolicy(R"(version: 1
defaults:
  tolerance: 30%
skus:
  - pattern: "h100-*"
    rules:
      - benchmark: "kernels/copy*"
        metric: time
        tolerance: 10%
)",
                                              "perfgate.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  const std::vector<MetricData> candidate = {Summary(kCopy, "time", 12.5)};
  const std::vector<std::vector<MetricData>> baseline = {{Summary(kCopy, "time", 10.0)}};
  const GateResult h100 = EvaluateGate(Confirmed(Input(candidate, baseline)), *policy);
  EXPECT_TRUE(h100.outcome == Outcome::kRegression);
  EXPECT_DOUBLE_EQ(h100.verdicts[0].tolerance, 0.10);
  GateInput on_a100 = Confirmed(Input(candidate, baseline));
  on_a100.sku = "a100-sxm4-80gb";
  const GateResult a100 = EvaluateGate(on_a100, *policy);
  EXPECT_FALSE(a100.outcome == Outcome::kRegression);
  EXPECT_DOUBLE_EQ(a100.verdicts[0].tolerance, 0.30);
}

TEST(EvaluateGate, VerdictsAreSortedWorstFirst) {
  const auto s = [](const std::string& name, double median) {
    return Summary("kernels/" + name, "time", median);
  };
  const GateResult r = EvaluateGate(Confirmed(Input({s("pass_small", 10.1), s("improve_big", 5.0), s("regress_small", 11.5), s("pass_zero", 10.0),
       s("regress_big", 20.0), s("new", 1.0), s("improve_small", 8.0)},
      {{s("pass_small", 10.0), s("improve_big", 10.0), s("regress_small", 10.0),
        s("pass_zero", 10.0), s("regress_big", 10.0), s("gone", 10.0), s("improve_small", 10.0)}})),
      PolicyWithTolerance(0.10));
  std::vector<std::string> order;
  for (const MetricVerdict& v : r.verdicts) order.push_back(v.benchmark.substr(8));
  EXPECT_THAT(order,
              ::testing::ElementsAre("regress_big", "regress_small", "gone", "new", "pass_small",
                                     "pass_zero", "improve_small", "improve_big"));
}

TEST(GateVerdict, OutcomesAreTheExitCodes) {
  EXPECT_EQ(static_cast<int>(Outcome::kPass), 0);
  EXPECT_EQ(static_cast<int>(Outcome::kRegression), 1);
  EXPECT_EQ(static_cast<int>(Outcome::kInconclusive), 3);
}

TEST(AbGate, TenPercentSlowerProcessesRegressWithATestedChange) {
  const GateResult r = EvaluateGate(Input({Processes(kCopy, "time", 11.0, 0.01)},
                                          {{Processes(kCopy, "time", 10.0, 0.01)}}, Mode::kAb),
                                    PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  const MetricVerdict& v = r.verdicts[0];
  EXPECT_EQ(v.method, Method::kBlocks);
  EXPECT_EQ(v.verdict, Verdict::kRegression);
  EXPECT_NEAR(v.change, 0.10, 1e-9);
  EXPECT_LT(v.change_ci_low, 0.10);
  EXPECT_GT(v.change_ci_high, 0.10);
  EXPECT_GT(v.change_ci_low, 0.03);  // the whole interval is past the tolerance
  EXPECT_LT(v.p_value, 1e-6);        // 30 vs 30 processes that do not overlap
  EXPECT_EQ(v.baseline_samples, 30u);
  EXPECT_EQ(r.outcome, Outcome::kRegression);
  EXPECT_EQ(r.mode, Mode::kAb);
}

TEST(AbGate, HigherIsBetterDropIsARegression) {
  const GateResult r = EvaluateGate(
      Input({Processes(kTriad, "bandwidth", 90.0, 0.01, 30, Direction::kHigherIsBetter)},
            {{Processes(kTriad, "bandwidth", 100.0, 0.01, 30, Direction::kHigherIsBetter)}},
            Mode::kAb),
      PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_NEAR(r.verdicts[0].change, 0.10, 1e-9);
}

TEST(AbGate, SameSamplesPass) {
  const GateResult r = EvaluateGate(Input({Processes(kCopy, "time", 10.0, 0.02)},
                                          {{Processes(kCopy, "time", 10.0, 0.02)}}, Mode::kAb),
                                    PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kPass);
  EXPECT_NEAR(r.verdicts[0].change, 0.0, 1e-12);
  EXPECT_GT(r.verdicts[0].p_value, 0.9);
  EXPECT_EQ(r.outcome, Outcome::kPass);
}

TEST(AbGate, AWideIntervalIsTooNoisyAndInconclusive) {
  // +-40 % spread, 6 samples a side: a 3 % tolerance cannot be judged.
  const GateResult r =
      EvaluateGate(Input({Processes(kCopy, "time", 10.2, 0.4, 6)},
                         {{Processes(kCopy, "time", 10.0, 0.4, 6)}}, Mode::kAb),
                   PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kTooNoisy);
  EXPECT_GT(r.verdicts[0].change_ci_high - r.verdicts[0].change_ci_low, 0.06);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("wider than twice the tolerance"));
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
}

TEST(AbGate, PolicyDecidesWhatInconclusiveMeans) {
  const GateInput in = Input({Processes(kCopy, "time", 10.2, 0.4, 6)},
                             {{Processes(kCopy, "time", 10.0, 0.4, 6)}}, Mode::kAb);
  Policy fail = PolicyWithTolerance(0.03);
  fail.inconclusive = InconclusiveAction::kFail;
  EXPECT_EQ(EvaluateGate(in, fail).outcome, Outcome::kRegression);
  Policy pass = PolicyWithTolerance(0.03);
  pass.inconclusive = InconclusiveAction::kPass;
  const GateResult r = EvaluateGate(in, pass);
  EXPECT_EQ(r.outcome, Outcome::kPass);
  EXPECT_THAT(r.summary, HasSubstr("could not be judged and the policy passes them"));
}

TEST(AbGate, CandidateNoiseAboveThePolicysLimitIsTooNoisy) {
  Policy policy = PolicyWithTolerance(0.05);
  policy.max_noise = 0.01;
  const GateResult r = EvaluateGate(Input({Processes(kCopy, "time", 10.0, 0.05)},
                                          {{Processes(kCopy, "time", 10.0, 0.005)}}, Mode::kAb),
                                    policy);
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kTooNoisy);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("above the 1.0 % the policy allows"));
}

TEST(AbGate, ManyMetricsAreCorrectedTogether) {
  // One metric 4 % slower with heavily overlapping samples: significant alone
  // (p about 0.02) but not among 40 metrics after Benjamini–Hochberg.
  std::vector<MetricData> cand = {Processes(kCopy, "time", 10.4, 0.10, 30)};
  std::vector<MetricData> base = {Processes(kCopy, "time", 10.0, 0.10, 30)};
  const GateResult alone =
      EvaluateGate(Input(cand, {base}, Mode::kAb), PolicyWithTolerance(0.03));
  ASSERT_EQ(alone.verdicts.size(), 1u);
  const double p = alone.verdicts[0].p_value;
  ASSERT_LT(p, 0.05);
  EXPECT_DOUBLE_EQ(alone.verdicts[0].p_adjusted, p);
  for (int i = 0; i < 39; ++i) {
    const std::string key = "kernels/other{i=" + std::to_string(i) + "}";
    cand.push_back(Processes(key, "time", 10.0, 0.10, 30));
    base.push_back(Processes(key, "time", 10.0, 0.10, 30));
  }
  const GateResult many = EvaluateGate(Input(cand, {base}, Mode::kAb), PolicyWithTolerance(0.03));
  const MetricVerdict* copy = nullptr;
  for (const MetricVerdict& v : many.verdicts) {
    if (v.benchmark == kCopy) copy = &v;
  }
  ASSERT_NE(copy, nullptr);
  EXPECT_DOUBLE_EQ(copy->p_value, p);
  EXPECT_GT(copy->p_adjusted, 0.05);
  EXPECT_NE(copy->verdict, Verdict::kRegression);
}

TEST(HistoryGate, TwoRunsAreTooFewWhateverTheirSamplesSay) {
  // 30 samples a run that do not overlap: the old trap. Samples of one
  // process share its luck; two runs cannot show how far runs move.
  const GateResult r = EvaluateGate(Input({Samples(kCopy, "time", 12.0, 0.01)},
                                          {{Samples(kCopy, "time", 10.0, 0.01)},
                                           {Samples(kCopy, "time", 10.1, 0.01)}},
                                          Mode::kHistory, /*calibrated=*/false),
                                    PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kTooFewRuns);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("1 process vs 2 processes"));
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("perfgate-agent calibrate"));
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
}

TEST(HistoryGate, TwoRunsAndACalibrationOfTheNodeDecide) {
  GateInput in = Input({Samples(kCopy, "time", 12.0, 0.01)},
                       {{Samples(kCopy, "time", 10.0, 0.01)}, {Samples(kCopy, "time", 10.1, 0.01)}},
                       Mode::kHistory, /*calibrated=*/false);
  // Runs of this case on this node move by 1 % (log stdev 0.01, 10 A/A processes).
  in.calibrations[{kCopy, "time"}] = {0.01, 10, "node n1"};
  const GateResult r = EvaluateGate(Confirmed(in), PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].method, Method::kCalibrated);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_LT(r.verdicts[0].p_value, 1e-4);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("calibration of node n1"));
  // The same candidate against runs that move by 20 %: nothing can be said.
  in.calibrations[{kCopy, "time"}] = {0.20, 10, "node n2"};
  const GateResult wide = EvaluateGate(in, PolicyWithTolerance(0.03));
  EXPECT_EQ(wide.verdicts[0].verdict, Verdict::kTooNoisy);
}

TEST(AbGate, OneProcessASideIsTooFewAndSaysWhatToRun) {
  const GateResult r = EvaluateGate(Input({Samples(kCopy, "time", 13.0, 0.01)},
                                          {{Samples(kCopy, "time", 10.0, 0.01)}}, Mode::kAb, false),
                                    PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kTooFewRuns);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("Measure 3 or more processes a side"));
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
}

// A side of `rounds` blocks of `per` samples: block i at level
// base * drift^i * (1 + offset_i), samples spread 1 % around it.
MetricData Rounds(double base, double drift, const std::vector<double>& offsets, unsigned per = 5) {
  MetricData m = Summary(kCopy, "time", base);
  double level = base;
  for (double off : offsets) {
    for (unsigned j = 0; j < per; ++j) m.samples.push_back(level * (1 + off) * (1 + 0.01 * (j - 2.0) / 2));
    level *= drift;
  }
  m.blocks = static_cast<unsigned>(offsets.size());
  m.rounds = true;
  m.summary.n = static_cast<uint32_t>(m.samples.size());
  m.summary.median = stats::Median(m.samples);
  return m;
}

// Per-process offsets within +-0.4 %, in a fixed scrambled order.
std::vector<double> SmallOffsets(unsigned n) {
  std::vector<double> out;
  for (unsigned i = 0; i < n; ++i) out.push_back(0.004 * (-1.0 + 2.0 * ((i * 7 + 3) % n) / (n - 1)));
  return out;
}

TEST(AbGate, RoundsArePairedSoDriftBothSidesShareCancels) {
  // The node slows 3 % a round for 12 rounds (a 40 % drift); the candidate
  // is 5 % slower in every round. Unpaired, the drift swamps the change.
  const std::vector<double> none(12, 0.0);
  MetricData base = Rounds(10.0, 1.03, none);
  MetricData cand = Rounds(10.5, 1.03, none);
  const GateResult r = EvaluateGate(Input({cand}, {{base}}, Mode::kAb), PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].method, Method::kBlocks);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_NEAR(r.verdicts[0].change, 0.05, 1e-9);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("12 processes a side, paired by round"));
  base.rounds = cand.rounds = false;
  const GateResult unpaired = EvaluateGate(Input({cand}, {{base}}, Mode::kAb), PolicyWithTolerance(0.03));
  EXPECT_NE(unpaired.verdicts[0].verdict, Verdict::kRegression);
}

// Three result files a side, 10 % slower, under a 1 % false-discovery
// rate over two metrics: ranks of 3 against 3 give p >= 0.1 at best, so no
// change can ever be significant. The verdict says so and how many files a
// side would do, instead of passing an untestable change or calling it noisy.
TEST(FilesGate, TooFewFilesForTheCorrectionSayHowManyASideWouldDo) {
  Policy policy = PolicyWithTolerance(0.03);
  policy.fdr = 0.01;
  // Two metrics, `n` unpaired processes a side, the candidate 10 % slower.
  auto gate = [&](unsigned n) {
    return EvaluateGate(Input({Processes(kCopy, "time", 11.0, 0.01, n), Processes(kGemm, "time", 11.0, 0.01, n)},
                              {{Processes(kCopy, "time", 10.0, 0.01, n), Processes(kGemm, "time", 10.0, 0.01, n)}},
                              Mode::kAb, false),
                        policy);
  };
  const GateResult three = gate(3);
  ASSERT_EQ(three.verdicts.size(), 2u);
  for (const MetricVerdict& v : three.verdicts) {
    EXPECT_EQ(v.verdict, Verdict::kTooFewRuns) << v.note;
    EXPECT_THAT(v.note, HasSubstr("3 against 3 processes cannot be significant here"));
    // 2 / C(12, 6) = 0.0022 <= 0.01 / 2, and 2 / C(10, 5) = 0.0079 is not.
    EXPECT_THAT(v.note, HasSubstr("Measure 6 processes (result files) a side"));
  }
  // Six a side can be judged: the same change is then a regression.
  const GateResult six = gate(6);
  ASSERT_EQ(six.verdicts.size(), 2u);
  for (const MetricVerdict& v : six.verdicts) EXPECT_EQ(v.verdict, Verdict::kRegression) << v.note;
}

TEST(FilesGate, SmallestRankPValueIsTwoOverTheWaysToSplitTheProcesses) {
  EXPECT_NEAR(internal::SmallestRankP(5, 5), 2.0 / 252, 1e-12);
  EXPECT_NEAR(internal::SmallestRankP(3, 4), 2.0 / 35, 1e-12);
  EXPECT_EQ(internal::ProcessesForRankP(0.05), 4u);   // 2 / 70 = 0.029; 2 / 20 = 0.1
  EXPECT_EQ(internal::ProcessesForRankP(0.0005), 8u);  // 2 / 12870; 2 / 3432 = 0.00058
}

// A/A over 20 rounds; a neighbour's burst slows two candidate blocks by
// 60 % and 40 %: the candidate's block offsets and the baseline's.
std::pair<std::vector<double>, std::vector<double>> TwoBurstRounds() {
  std::vector<double> offsets = SmallOffsets(20);
  std::vector<double> burst = offsets;
  burst[3] += 0.6;
  burst[8] += 0.4;
  std::reverse(offsets.begin(), offsets.end());
  return {burst, offsets};
}

TEST(AbGate, ABurstThatSlowsOneBlockIsNotARegression) {
  // Ranks see two large differences, not a level shift.
  const auto [burst, offsets] = TwoBurstRounds();
  const GateResult r = EvaluateGate(Input({Rounds(10.0, 1.0, burst)}, {{Rounds(10.0, 1.0, offsets)}}, Mode::kAb),
                                    PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kPass) << r.verdicts[0].note;
  EXPECT_LT(std::fabs(r.verdicts[0].change), 0.01);
  // The two burst rounds are set aside, and the note says so.
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("2 rounds set aside as interference bursts"));
}
// The blocks of `m` as a throughput (1000 / time), which a slowdown lowers.
MetricData AsThroughput(MetricData m) {
  for (double& x : m.samples) x = 1000.0 / x;
  m.summary.direction = Direction::kHigherIsBetter;
  m.summary.median = stats::Median(m.samples);
  return m;
}

TEST(AbGate, RoundsWhoseBlocksRanOnCpusOfDifferentSpeedsAreNoRegression) {
  // A/A over 12 rounds on a VM whose scheduler put the two blocks of every
  // round on different vCPUs, one of them 25 % slower: the candidate drew
  // the slow one in 9 rounds, the baseline in the other 3. Each round's
  // difference is +-25 %; the 3 rounds of the minority are not bursts (the
  // candidate's block in them is faster than all its others), so they are
  // not set aside, and the 12 together do not show a change.
  const std::vector<double> offsets = SmallOffsets(12);
  std::vector<double> base = offsets, cand = offsets;
  for (size_t i = 0; i < offsets.size(); ++i) {
    const bool cand_slow = i != 2 && i != 6 && i != 9;
    double& slow = cand_slow ? cand[i] : base[i];
    slow = (1 + slow) * 1.25 - 1;
  }
  const GateResult r = EvaluateGate(Input({Rounds(10.0, 1.0, cand)}, {{Rounds(10.0, 1.0, base)}}, Mode::kAb),
                                    PolicyWithTolerance(0.05));
  ASSERT_EQ(r.verdicts.size(), 1u);
  const MetricVerdict& v = r.verdicts[0];
  EXPECT_NE(v.verdict, Verdict::kRegression) << v.note;
  EXPECT_FALSE(Fails(v.verdict)) << v.note;
  EXPECT_THAT(v.note, Not(HasSubstr("set aside")));
  EXPECT_LT(v.change_ci_low, 0.0) << v.note;
  // The same blocks as a throughput, which the slower CPU lowers.
  const GateResult t = EvaluateGate(
      Input({AsThroughput(Rounds(10.0, 1.0, cand))}, {{AsThroughput(Rounds(10.0, 1.0, base))}}, Mode::kAb),
      PolicyWithTolerance(0.05));
  ASSERT_EQ(t.verdicts.size(), 1u);
  EXPECT_FALSE(Fails(t.verdicts[0].verdict)) << t.verdicts[0].note;
  EXPECT_THAT(t.verdicts[0].note, Not(HasSubstr("set aside")));
}

TEST(AbGate, ABurstOnAThroughputIsSetAsideAsOnATime) {
  // The burst test's blocks as a throughput: the bursts lower it.
  const auto [burst, offsets] = TwoBurstRounds();
  const GateResult r = EvaluateGate(
      Input({AsThroughput(Rounds(10.0, 1.0, burst))}, {{AsThroughput(Rounds(10.0, 1.0, offsets))}}, Mode::kAb),
      PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kPass) << r.verdicts[0].note;
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("2 rounds set aside as interference bursts"));
}
TEST(AbGate, APassNeedsTheWorseEndOfItsIntervalWithinTheTolerance) {
  // A 10 % slowdown measured at about +4 %: not significant, within the
  // tolerance, the interval narrower than twice it, but a regression well
  // beyond 5 % is not ruled out. Before the pass contract this passed.
  const GateResult r = EvaluateGate(Input({Processes(kCopy, "time", 10.4, 0.06, 12)},
                                          {{Processes(kCopy, "time", 10.0, 0.06, 12)}}, Mode::kAb),
                                    PolicyWithTolerance(0.05));
  ASSERT_EQ(r.verdicts.size(), 1u);
  const MetricVerdict& v = r.verdicts[0];
  EXPECT_GT(v.change_ci_high, 0.05) << v.note;
  EXPECT_LE(v.change_ci_high - v.change_ci_low, 0.10) << v.note;
  EXPECT_LT(v.change, 0.05) << v.note;
  EXPECT_EQ(v.verdict, Verdict::kUndecided) << v.note;
  EXPECT_THAT(v.note, HasSubstr("not a pass: the worse end of the interval"));
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
  // The same change with a narrow interval is a pass, and says what it ruled out.
  const GateResult tight = EvaluateGate(Input({Processes(kCopy, "time", 10.1, 0.01, 12)},
                                              {{Processes(kCopy, "time", 10.0, 0.01, 12)}}, Mode::kAb),
                                        PolicyWithTolerance(0.05));
  EXPECT_EQ(tight.verdicts[0].verdict, Verdict::kPass) << tight.verdicts[0].note;
  EXPECT_THAT(tight.verdicts[0].note, HasSubstr("rules out a regression beyond it"));
}

TEST(EvaluateGate, NothingComparedIsNeverAPass) {
  Policy lenient;
  lenient.inconclusive = InconclusiveAction::kPass;  // not even when the policy passes what it cannot judge
  const GateResult r = EvaluateGate(Input({}, {{}}, Mode::kAb), lenient);
  EXPECT_TRUE(r.verdicts.empty());
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
  EXPECT_THAT(r.summary, HasSubstr("nothing compared"));
}
TEST(AbGate, ARealSlowdownOfEveryBlockIsStillCaughtBesideABurst) {
  std::vector<double> offsets = SmallOffsets(20);
  std::vector<double> slow = offsets;
  for (double& o : slow) o = (1 + o) * 1.10 - 1;
  slow[5] += 0.5;  // and a burst on top of one block
  std::reverse(offsets.begin(), offsets.end());
  const GateResult r = EvaluateGate(Input({Rounds(10.0, 1.0, slow)}, {{Rounds(10.0, 1.0, offsets)}}, Mode::kAb),
                                    PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression) << r.verdicts[0].note;
  EXPECT_NEAR(r.verdicts[0].change, 0.10, 0.01);
  // The slowdown moved every round; only the burst round stands apart.
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("1 round set aside as an interference burst"));
}

TEST(HistoryGate, BetweenRunNoiseDecidesWithFiveRuns) {
  // Run medians 9.95 .. 10.05 (s = 0.079): a candidate at 10.1 is within
  // their spread, one at 12 far outside it. The prediction interval is
  // +-2.776 * 0.079 * sqrt(1.2) = +-0.24, narrow enough for a 3 % tolerance.
  std::vector<std::vector<MetricData>> history;
  for (double m : {10.0, 9.95, 10.05, 9.9 + 0.075, 10.025}) {
    history.push_back({Summary(kCopy, "time", m)});
  }
  const GateResult same = EvaluateGate(Input({Summary(kCopy, "time", 10.1)}, history, Mode::kHistory, false),
                                       PolicyWithTolerance(0.03));
  ASSERT_EQ(same.verdicts.size(), 1u);
  EXPECT_EQ(same.verdicts[0].method, Method::kHistory);
  EXPECT_EQ(same.verdicts[0].verdict, Verdict::kPass);
  EXPECT_GT(same.verdicts[0].p_value, 0.05);
  const GateResult slow = EvaluateGate(Confirmed(Input({Summary(kCopy, "time", 12.0)}, history, Mode::kHistory, false)),
                                       PolicyWithTolerance(0.03));
  EXPECT_EQ(slow.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_LT(slow.verdicts[0].p_value, 0.01);
  // Against the runs' geometric mean (the t test's centre on the log scale), 9.99999.
  EXPECT_NEAR(slow.verdicts[0].change, 0.2, 1e-4);
  EXPECT_EQ(slow.verdicts[0].baseline_runs, 5u);
}

TEST(InvalidEnvironment, AnUnfitCandidateRunIsNotBlamedOnTheCode) {
  GateInput in = Input({Samples(kCopy, "time", 13.0, 0.01)}, {{Samples(kCopy, "time", 10.0, 0.01)}},
                       Mode::kAb);
  in.candidate.invalid_reasons.push_back("GPU 0: HW slowdown on 80 % of samples");
  const GateResult r = EvaluateGate(in, PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kInvalidEnvironment);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("HW slowdown"));
  EXPECT_EQ(r.outcome, Outcome::kInconclusive);
  EXPECT_THAT(r.summary, HasSubstr("environment unfit for gating"));
}

TEST(InvalidEnvironment, MostlyThrottledCandidateMetricIsInvalid) {
  MetricData cand = Samples(kCopy, "time", 13.0, 0.01, 10);
  cand.summary.n_throttled = 30;
  const GateResult r = EvaluateGate(
      Input({cand}, {{Samples(kCopy, "time", 10.0, 0.01)}}, Mode::kAb), PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kInvalidEnvironment);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("30 of 40 candidate samples were throttled"));
}

TEST(AbOverrides, AnAbToleranceAppliesOnlyToAbGates) {
  absl::StatusOr<Policy> policy = ParsePolicy(R"(version: 1
defaults:
  tolerance: 10%
  ab:
    tolerance: 2%
)",
                                              "perfgate.yaml");
  ASSERT_TRUE(policy.ok()) << policy.status();
  const MetricData cand = Samples(kCopy, "time", 10.5, 0.005);
  const MetricData base = Samples(kCopy, "time", 10.0, 0.005);
  const GateResult ab = EvaluateGate(Input({cand}, {{base}}, Mode::kAb), *policy);
  EXPECT_EQ(ab.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_DOUBLE_EQ(ab.verdicts[0].tolerance, 0.02);
  const GateResult history = EvaluateGate(Input({cand}, {{base}}), *policy);
  EXPECT_EQ(history.verdicts[0].verdict, Verdict::kPass);
  EXPECT_DOUBLE_EQ(history.verdicts[0].tolerance, 0.10);
}

// A case of 30 samples around `level` (+-1 %).
CaseResult TimedCase(const std::string& name, double level) {
  CaseResult c;
  c.benchmark = {"kernels", name, {{"bytes", "4096"}}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  for (uint32_t i = 0; i < 30; ++i) {
    c.samples.push_back({i, {level * (1.0 + 0.01 * std::sin(1.7 * i))}, false});
  }
  c.status = CaseStatus::kOk;
  return c;
}

TEST(RunDataFromCases, SummarizesUnthrottledSamplesAndCountsTheThrottledOnes) {
  CaseResult c;
  c.benchmark.suite = "test";
  c.benchmark.name = "a";
  c.metrics.push_back({"time", "ms", Direction::kLowerIsBetter});
  c.status = CaseStatus::kOk;
  c.samples = {{0, {1.0}, false}, {1, {100.0}, true}, {2, {3.0}, false}, {3, {2.0}, false}};
  const RunData run = RunDataFromCases("r", {c}, {{"test/a", {{2, 2}, true}}});
  ASSERT_EQ(run.metrics.size(), 1u);
  EXPECT_EQ(run.metrics[0].summary.benchmark, "test/a");
  EXPECT_EQ(run.metrics[0].summary.n, 3u);
  EXPECT_EQ(run.metrics[0].summary.n_throttled, 1u);
  EXPECT_DOUBLE_EQ(run.metrics[0].summary.median, 2.0);
  EXPECT_EQ(run.metrics[0].samples, (std::vector<double>{1.0, 3.0, 2.0}));
  // Two processes of two samples each; the throttled one leaves one kept.
  EXPECT_EQ(run.metrics[0].block_sizes, (std::vector<unsigned>{1, 2}));
  EXPECT_TRUE(run.metrics[0].rounds);
}

TEST(RunDataFromCases, KeepsTheCaseStatusAndLeavesThrottledOutliersOut) {
  CaseResult c = TimedCase("copy", 10);
  c.samples[0].values[0] = 1000;  // an outlier the throttle mark must keep out
  c.samples[0].throttled = true;
  CaseResult skipped;
  skipped.benchmark = {"kernels", "fp8_gemm", {}};
  skipped.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  skipped.status = CaseStatus::kSkipped;
  skipped.reason = "needs sm_90a";

  const RunData run = RunDataFromCases("run.json", {c, skipped});
  EXPECT_EQ(run.run_id, "run.json");
  ASSERT_EQ(run.metrics.size(), 2u);
  const MetricData& copy = run.metrics[0];
  EXPECT_EQ(copy.summary.benchmark, "kernels/copy{bytes=4096}");
  EXPECT_EQ(copy.summary.n, 29u);
  EXPECT_EQ(copy.summary.n_throttled, 1u);
  EXPECT_EQ(copy.samples.size(), 29u);
  EXPECT_LT(copy.summary.max, 11.0);
  EXPECT_EQ(copy.summary.status, CaseStatus::kOk);
  const MetricData& fp8 = run.metrics[1];
  EXPECT_EQ(fp8.summary.n, 0u);
  EXPECT_EQ(fp8.summary.status, CaseStatus::kSkipped);
  EXPECT_EQ(fp8.summary.reason, "needs sm_90a");
}

TEST(RunDataFromCases, PartsOfOneCaseAreJoinedIntoOneMetric) {
  CaseResult first = TimedCase("copy", 10);
  CaseResult second = TimedCase("copy", 10);
  first.status = CaseStatus::kUnspecified;  // only the last part says how the case ended
  const RunData run = RunDataFromCases("run.json", {first, second});
  ASSERT_EQ(run.metrics.size(), 1u);
  EXPECT_EQ(run.metrics[0].summary.n, 60u);
  EXPECT_EQ(run.metrics[0].summary.status, CaseStatus::kOk);
}

TEST(EvaluateGate, ACaseThatFailedAfterMeasuringIsMissingNotJudgedOnItsSamples) {
  CaseResult wrong = TimedCase("copy", 10);
  wrong.status = CaseStatus::kFailed;
  wrong.reason = "all_reduce: 64 B, rank 1: element 3 is 7, expected 6";
  const GateResult r = EvaluateGate(
      Input(RunDataFromCases("c", {wrong}).metrics, {RunDataFromCases("b", {TimedCase("copy", 10)}).metrics},
            Mode::kAb),
      PolicyWithTolerance(0.03));
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kMissing);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("element 3 is 7"));
  EXPECT_EQ(r.outcome, Outcome::kRegression);
}

}  // namespace
}  // namespace perfgate::gate
