#include "coordinator/gate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace perfgate::coordinator {
namespace {

using ::testing::HasSubstr;

constexpr char kSku[] = "h100-sxm5-80gb";
constexpr char kCopy[] = "kernels/copy{bytes=268435456}";
constexpr char kTriad[] = "kernels/triad{n=67108864}";
constexpr char kGemm[] = "kernels/gemm{dtype=bf16,k=8192,m=8192,n=8192}";

MetricSummary Summary(const std::string& benchmark, const std::string& metric, double median,
                      Direction direction = Direction::kLowerIsBetter, uint32_t n = 20) {
  MetricSummary s;
  s.benchmark = benchmark;
  s.metric = metric;
  s.unit = direction == Direction::kLowerIsBetter ? "ms" : "GB/s";
  s.direction = direction;
  s.n = n;
  s.median = s.mean = s.min = s.max = median;
  s.status = CaseStatus::kOk;
  return s;
}

ResolvedRule Rule(double tolerance, std::optional<double> floor = std::nullopt,
                  bool gating = true) {
  ResolvedRule r;
  r.tolerance = tolerance;
  r.floor = floor;
  r.gating = gating;
  return r;
}

// Runs the median decider on one metric.
MetricVerdict DecideOne(const MetricSummary* candidate, const std::vector<MetricSummary>& baseline,
                        const ResolvedRule& rule) {
  DecisionInput in;
  const MetricSummary& any = candidate != nullptr ? *candidate : baseline.front();
  in.benchmark = any.benchmark;
  in.metric = any.metric;
  in.unit = any.unit;
  in.direction = any.direction;
  in.candidate = candidate;
  for (const MetricSummary& s : baseline) in.baseline.push_back(&s);
  in.rule = rule;
  return MedianToleranceDecider().Decide(in);
}

Policy PolicyWithTolerance(double tolerance) {
  Policy p;
  p.tolerance = tolerance;
  return p;
}

TEST(GateDecider, LowerIsBetterMetric25PercentSlowerRegressesAtTenPercentTolerance) {
  const MetricSummary candidate = Summary(kCopy, "time", 12.5);
  const MetricVerdict v = DecideOne(&candidate, {Summary(kCopy, "time", 10.0)}, Rule(0.10));
  EXPECT_EQ(v.verdict, Verdict::kRegression);
  EXPECT_NEAR(v.change, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(v.baseline_median, 10.0);
  EXPECT_DOUBLE_EQ(v.candidate_median, 12.5);
  EXPECT_EQ(v.baseline_runs, 1u);
  EXPECT_EQ(v.candidate_samples, 20u);
  EXPECT_THAT(v.note, HasSubstr("median 12.5 ms vs baseline 10 ms over 1 run: 25.0 % worse"));
  EXPECT_THAT(v.note, HasSubstr("tolerance 10.0 %"));
}

TEST(GateDecider, LowerIsBetterMetricWithinTwoPercentPasses) {
  const MetricSummary candidate = Summary(kCopy, "time", 10.15);
  const MetricVerdict v = DecideOne(&candidate, {Summary(kCopy, "time", 10.0)}, Rule(0.02));
  EXPECT_EQ(v.verdict, Verdict::kPass);
  EXPECT_NEAR(v.change, 0.015, 1e-12);
  EXPECT_THAT(v.note, HasSubstr("within tolerance"));
}

TEST(GateDecider, LowerIsBetterMetricMuchFasterIsAnImprovement) {
  const MetricSummary candidate = Summary(kCopy, "time", 8.0);
  const MetricVerdict v = DecideOne(&candidate, {Summary(kCopy, "time", 10.0)}, Rule(0.05));
  EXPECT_EQ(v.verdict, Verdict::kImprovement);
  EXPECT_NEAR(v.change, -0.2, 1e-12);
  EXPECT_THAT(v.note, HasSubstr("20.0 % better"));
}

TEST(GateDecider, HigherIsBetterMetricThatDropsRegresses) {
  const MetricSummary candidate = Summary(kTriad, "bandwidth", 12.0, Direction::kHigherIsBetter);
  const MetricVerdict v = DecideOne(
      &candidate, {Summary(kTriad, "bandwidth", 16.0, Direction::kHigherIsBetter)}, Rule(0.10));
  EXPECT_EQ(v.verdict, Verdict::kRegression);
  EXPECT_NEAR(v.change, 0.25, 1e-12);  // positive means worse whatever the direction
  EXPECT_THAT(v.note, HasSubstr("GB/s"));
}

TEST(GateDecider, HigherIsBetterMetricThatRisesImproves) {
  const MetricSummary candidate = Summary(kTriad, "bandwidth", 20.0, Direction::kHigherIsBetter);
  const MetricVerdict v = DecideOne(
      &candidate, {Summary(kTriad, "bandwidth", 16.0, Direction::kHigherIsBetter)}, Rule(0.10));
  EXPECT_EQ(v.verdict, Verdict::kImprovement);
  EXPECT_NEAR(v.change, -0.25, 1e-12);
}

TEST(GateDecider, HigherIsBetterMetricBelowFloorFailsEvenWithinTolerance) {
  const MetricSummary candidate = Summary(kGemm, "tflops", 690, Direction::kHigherIsBetter);
  const MetricVerdict v = DecideOne(
      &candidate, {Summary(kGemm, "tflops", 695, Direction::kHigherIsBetter)}, Rule(0.05, 700));
  EXPECT_EQ(v.verdict, Verdict::kBelowFloor);
  EXPECT_DOUBLE_EQ(v.floor, 700);
  EXPECT_THAT(v.note, HasSubstr("below the floor of 700"));
}

TEST(GateDecider, HigherIsBetterMetricAboveFloorPasses) {
  const MetricSummary candidate = Summary(kGemm, "tflops", 710, Direction::kHigherIsBetter);
  const MetricVerdict v = DecideOne(
      &candidate, {Summary(kGemm, "tflops", 712, Direction::kHigherIsBetter)}, Rule(0.05, 700));
  EXPECT_EQ(v.verdict, Verdict::kPass);
}

TEST(GateDecider, LowerIsBetterFloorIsACeiling) {
  const MetricSummary slow = Summary(kCopy, "time", 5.2);
  const MetricVerdict over = DecideOne(&slow, {Summary(kCopy, "time", 5.1)}, Rule(0.05, 5.0));
  EXPECT_EQ(over.verdict, Verdict::kBelowFloor);
  EXPECT_THAT(over.note, HasSubstr("above the ceiling of 5 ms"));

  const MetricSummary fast = Summary(kCopy, "time", 4.9);
  EXPECT_EQ(DecideOne(&fast, {Summary(kCopy, "time", 4.9)}, Rule(0.05, 5.0)).verdict,
            Verdict::kPass);
}

TEST(GateDecider, FloorIsCheckedWithoutBaseline) {
  const MetricSummary candidate = Summary(kGemm, "tflops", 650, Direction::kHigherIsBetter);
  EXPECT_EQ(DecideOne(&candidate, {}, Rule(0.03, 700)).verdict, Verdict::kBelowFloor);
  const MetricSummary good = Summary(kGemm, "tflops", 750, Direction::kHigherIsBetter);
  EXPECT_EQ(DecideOne(&good, {}, Rule(0.03, 700)).verdict, Verdict::kNoBaseline);
}

TEST(GateDecider, CandidateWithoutMetricIsMissing) {
  const MetricVerdict v = DecideOne(nullptr, {Summary(kCopy, "time", 10.0)}, Rule(0.03));
  EXPECT_EQ(v.verdict, Verdict::kMissing);
  EXPECT_TRUE(std::isnan(v.candidate_median));
  EXPECT_DOUBLE_EQ(v.baseline_median, 10.0);
  EXPECT_THAT(v.note, HasSubstr("absent from the candidate"));
}

TEST(GateDecider, CandidateWithOnlyThrottledSamplesIsMissing) {
  MetricSummary candidate = Summary(kCopy, "time", 0.0, Direction::kLowerIsBetter, 0);
  candidate.n_throttled = 12;
  candidate.status = CaseStatus::kTimedOut;
  const MetricVerdict v = DecideOne(&candidate, {Summary(kCopy, "time", 10.0)}, Rule(0.03));
  EXPECT_EQ(v.verdict, Verdict::kMissing);
  EXPECT_THAT(v.note, HasSubstr("12 throttled"));
}

TEST(GateDecider, MetricWithoutBaselineRunsHasNoBaseline) {
  const MetricSummary candidate = Summary(kCopy, "time", 10.0);
  const MetricVerdict v = DecideOne(&candidate, {}, Rule(0.03));
  EXPECT_EQ(v.verdict, Verdict::kNoBaseline);
  EXPECT_EQ(v.baseline_runs, 0u);
  EXPECT_TRUE(std::isnan(v.change));
}

TEST(GateDecider, BaselineRunsWithoutSamplesAreIgnored) {
  const MetricSummary candidate = Summary(kCopy, "time", 10.0);
  const MetricVerdict v = DecideOne(
      &candidate, {Summary(kCopy, "time", 1.0, Direction::kLowerIsBetter, 0)}, Rule(0.03));
  EXPECT_EQ(v.verdict, Verdict::kNoBaseline);
}

TEST(GateDecider, ZeroBaselineDoesNotDivideByZero) {
  const MetricSummary candidate = Summary(kCopy, "errors", 1.0);
  const MetricVerdict v = DecideOne(&candidate, {Summary(kCopy, "errors", 0.0)}, Rule(0.03));
  EXPECT_EQ(v.verdict, Verdict::kNoBaseline);
  EXPECT_TRUE(std::isnan(v.change));
  EXPECT_THAT(v.note, HasSubstr("baseline of 0"));
}

TEST(GateDecider, BaselineIsMedianOfRunMediansOverThreeRuns) {
  const MetricSummary candidate = Summary(kCopy, "time", 10.5);
  // Mean of the medians would be 14; their median is 10.
  const MetricVerdict v = DecideOne(
      &candidate,
      {Summary(kCopy, "time", 22.0), Summary(kCopy, "time", 10.0), Summary(kCopy, "time", 10.0)},
      Rule(0.10));
  EXPECT_DOUBLE_EQ(v.baseline_median, 10.0);
  EXPECT_EQ(v.baseline_runs, 3u);
  EXPECT_NEAR(v.change, 0.05, 1e-12);
  EXPECT_EQ(v.verdict, Verdict::kPass);
  EXPECT_THAT(v.note, HasSubstr("over 3 runs"));
}

TEST(GateDecider, BaselineOfTwoRunsIsTheirMean) {
  const MetricSummary candidate = Summary(kCopy, "time", 12.0);
  const MetricVerdict v = DecideOne(
      &candidate, {Summary(kCopy, "time", 10.0), Summary(kCopy, "time", 14.0)}, Rule(0.1));
  EXPECT_DOUBLE_EQ(v.baseline_median, 12.0);
}

TEST(GateVerdict, NamesAreLowerCase) {
  EXPECT_STREQ(ToString(Verdict::kBelowFloor), "below_floor");
  EXPECT_STREQ(ToString(Verdict::kNoBaseline), "no_baseline");
  EXPECT_STREQ(ToString(Verdict::kRegression), "regression");
}

TEST(EvaluateGate, GatingRegressionFailsTheGate) {
  const GateResult r =
      EvaluateGate(kSku, {Summary(kCopy, "time", 12.5)}, {{Summary(kCopy, "time", 10.0)}},
                   PolicyWithTolerance(0.10), MedianToleranceDecider());
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_TRUE(r.regression);
  EXPECT_THAT(r.summary, HasSubstr("1 of 1 metric"));
  EXPECT_THAT(r.summary, HasSubstr(kCopy));
  EXPECT_THAT(r.summary, HasSubstr("25.0 % worse"));
}

TEST(EvaluateGate, AdvisoryRegressionDoesNotFailTheGate) {
  Policy policy = PolicyWithTolerance(0.10);
  policy.gating = false;
  const GateResult r =
      EvaluateGate(kSku, {Summary(kCopy, "time", 12.5)}, {{Summary(kCopy, "time", 10.0)}}, policy,
                   MedianToleranceDecider());
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_FALSE(r.verdicts[0].gating);
  EXPECT_FALSE(r.regression);
  EXPECT_THAT(r.summary, HasSubstr("no gating metric regressed"));
  EXPECT_THAT(r.summary, HasSubstr("1 advisory metric"));
}

TEST(EvaluateGate, MetricOnlyInBaselineIsMissingAndFailsTheGate) {
  const GateResult r = EvaluateGate(kSku, {Summary(kCopy, "time", 10.0)},
                                    {{Summary(kCopy, "time", 10.0), Summary(kTriad, "time", 3.0)}},
                                    PolicyWithTolerance(0.05), MedianToleranceDecider());
  ASSERT_EQ(r.verdicts.size(), 2u);
  EXPECT_EQ(r.verdicts[0].benchmark, kTriad);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kMissing);
  EXPECT_EQ(r.verdicts[0].unit, "ms");  // described from the baseline run
  EXPECT_TRUE(r.regression);
  EXPECT_THAT(r.summary, HasSubstr("missing"));
}

TEST(EvaluateGate, MetricOnlyInCandidateHasNoBaselineAndPasses) {
  const GateResult r = EvaluateGate(
      kSku, {Summary(kCopy, "time", 10.0), Summary(kTriad, "time", 3.0)},
      {{Summary(kCopy, "time", 10.0)}}, PolicyWithTolerance(0.05), MedianToleranceDecider());
  ASSERT_EQ(r.verdicts.size(), 2u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kNoBaseline);
  EXPECT_EQ(r.verdicts[1].verdict, Verdict::kPass);
  EXPECT_FALSE(r.regression);
}

TEST(EvaluateGate, BaselineMedianSpansRunsAndSkipsRunsWithoutTheMetric) {
  const GateResult r = EvaluateGate(kSku, {Summary(kCopy, "time", 10.0)},
                                    {{Summary(kCopy, "time", 9.0)},
                                     {Summary(kTriad, "time", 1.0)},
                                     {Summary(kCopy, "time", 11.0)},
                                     {Summary(kCopy, "time", 10.0)}},
                                    PolicyWithTolerance(0.05), MedianToleranceDecider());
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
  const std::vector<MetricSummary> candidate = {Summary(kCopy, "time", 12.5)};
  const std::vector<std::vector<MetricSummary>> baseline = {{Summary(kCopy, "time", 10.0)}};
  const GateResult h100 =
      EvaluateGate(kSku, candidate, baseline, *policy, MedianToleranceDecider());
  EXPECT_TRUE(h100.regression);
  EXPECT_DOUBLE_EQ(h100.verdicts[0].tolerance, 0.10);
  const GateResult a100 =
      EvaluateGate("a100-sxm4-80gb", candidate, baseline, *policy, MedianToleranceDecider());
  EXPECT_FALSE(a100.regression);
  EXPECT_DOUBLE_EQ(a100.verdicts[0].tolerance, 0.30);
}

TEST(EvaluateGate, VerdictsAreSortedWorstFirst) {
  const auto s = [](const std::string& name, double median) {
    return Summary("kernels/" + name, "time", median);
  };
  const GateResult r = EvaluateGate(
      kSku,
      {s("pass_small", 10.1), s("improve_big", 5.0), s("regress_small", 11.5), s("pass_zero", 10.0),
       s("regress_big", 20.0), s("new", 1.0), s("improve_small", 8.0)},
      {{s("pass_small", 10.0), s("improve_big", 10.0), s("regress_small", 10.0),
        s("pass_zero", 10.0), s("regress_big", 10.0), s("gone", 10.0), s("improve_small", 10.0)}},
      PolicyWithTolerance(0.10), MedianToleranceDecider());
  std::vector<std::string> order;
  for (const MetricVerdict& v : r.verdicts) order.push_back(v.benchmark.substr(8));
  EXPECT_THAT(order,
              ::testing::ElementsAre("regress_big", "regress_small", "gone", "new", "pass_small",
                                     "pass_zero", "improve_small", "improve_big"));
}

// A decider that returns a fixed verdict, to show EvaluateGate uses the one it is given.
class AlwaysNoisy final : public Decider {
 public:
  MetricVerdict Decide(const DecisionInput& in) const override {
    MetricVerdict v;
    v.benchmark = in.benchmark;
    v.metric = in.metric;
    v.verdict = Verdict::kTooNoisy;
    v.gating = in.rule.gating;
    return v;
  }
};

TEST(EvaluateGate, UsesTheGivenDecider) {
  const GateResult r =
      EvaluateGate(kSku, {Summary(kCopy, "time", 50.0)}, {{Summary(kCopy, "time", 10.0)}},
                   PolicyWithTolerance(0.10), AlwaysNoisy());
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kTooNoisy);
  EXPECT_FALSE(r.regression);
}

}  // namespace
}  // namespace perfgate::coordinator
