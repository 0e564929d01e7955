// A node's noise floor: the spread of A/A process medians, the fitness rule,
// when a calibration may stand for a candidate, the calibration file, and
// the gate judging one run against one with a calibration.
#include "gate/calibration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "formats/calibration_file.h"
#include "gate/gate.h"
#include "gate/policy.h"

namespace perfgate::gate {
namespace {

using ::testing::HasSubstr;

constexpr auto kDay = std::chrono::hours(24);

// One process's result: `values` as its time samples (throughput their
// inverse), the throttled ones marked.
CaseResult Process(const std::vector<double>& values, const std::vector<bool>& throttled = {}) {
  CaseResult c;
  c.benchmark = {"kernels", "sgemm", {{"m", "512"}}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}, {"gflops", "GFLOP/s", Direction::kHigherIsBetter}};
  for (size_t i = 0; i < values.size(); ++i) {
    const bool t = i < throttled.size() && throttled[i];
    c.samples.push_back({static_cast<uint32_t>(i), {values[i], 1000.0 / values[i]}, t});
  }
  c.status = CaseStatus::kOk;
  return c;
}

CalibrationSet Set(double spread, unsigned processes, TimePoint at) {
  CalibrationSet set;
  set.node = "n1";
  set.environment = {"cpu-amd-epyc", {{"cpu_model", "AMD EPYC 7B13"}, {"kernel", "6.1"}}};
  set.measured_at = at;
  set.entries.push_back({"kernels/sgemm{m=512}", "time", "ms", Direction::kLowerIsBetter, spread, processes});
  return set;
}

TEST(CalibrationSpread, IsTheBesselStdevOfTheLogsOfTheProcessMedians) {
  const std::vector<double> medians = {100, 110, 90};
  const double mean = (std::log(100.0) + std::log(110.0) + std::log(90.0)) / 3;
  double ss = 0;
  for (double m : medians) ss += (std::log(m) - mean) * (std::log(m) - mean);
  EXPECT_NEAR(LogSpread(medians), std::sqrt(ss / 2), 1e-15);
  // A metric and its reciprocal have the same spread on the log scale.
  EXPECT_NEAR(LogSpread(std::vector<double>{0.01, 1.0 / 110, 1.0 / 90}), LogSpread(medians), 1e-12);
  EXPECT_TRUE(std::isnan(LogSpread(std::vector<double>{100})));
  EXPECT_TRUE(std::isnan(LogSpread(std::vector<double>{100, 0})));
  EXPECT_EQ(LogSpread(std::vector<double>{5, 5, 5}), 0.0);
}

TEST(CalibrationSpread, TakesEachProcessMedianOfItsUnthrottledSamples) {
  // Process medians 10, 11 and 9; the throttled 50 must not move the first.
  const std::vector<CaseResult> processes = {Process({10, 9.5, 10.5, 50}, {false, false, false, true}),
                                             Process({11, 11, 10.9, 11.1}), Process({9, 9.2, 8.8})};
  const std::vector<CalibrationEntry> entries = CalibrateProcesses(processes);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].benchmark, "kernels/sgemm{m=512}");
  EXPECT_EQ(entries[0].metric, "time");
  EXPECT_EQ(entries[0].unit, "ms");
  EXPECT_EQ(entries[0].processes, 3u);
  EXPECT_NEAR(entries[0].spread, LogSpread(std::vector<double>{10, 11, 9}), 1e-12);
  EXPECT_EQ(entries[1].metric, "gflops");
  EXPECT_EQ(entries[1].direction, Direction::kHigherIsBetter);
  EXPECT_NEAR(entries[1].spread, entries[0].spread, 1e-12);
}

TEST(CalibrationSpread, LeavesOutAMetricWithFewerThanTwoProcesses) {
  EXPECT_TRUE(CalibrateProcesses({Process({10, 11})}).empty());
  // Two processes, one of them all throttled: one median is not a spread.
  EXPECT_TRUE(CalibrateProcesses({Process({10, 11}), Process({12}, {true})}).empty());
}

TEST(CalibrationFitness, IsTheTQuantileTimesTheSpreadTimesRootTwoAgainstTheTolerance) {
  // t(0.975, 9) = 2.2621571627...
  const double half = SingleRunHalfWidth(0.01, 10);
  EXPECT_NEAR(half, 2.2621571627409915 * 0.01 * std::sqrt(2.0), 1e-9);
  EXPECT_TRUE(FitToGate(0.01, 10, 0.035));
  EXPECT_FALSE(FitToGate(0.01, 10, 0.03));
  // Fewer processes: a wider t quantile, the same spread no longer fits.
  EXPECT_GT(SingleRunHalfWidth(0.01, 3), 0.06);
  EXPECT_FALSE(FitToGate(0.01, 3, 0.035));
  EXPECT_FALSE(FitToGate(0.01, 1, 0.5));
  EXPECT_FALSE(FitToGate(std::numeric_limits<double>::quiet_NaN(), 10, 0.5));
}

TEST(CalibrationUse, ANewCalibrationOfTheSameSkuAndEnvironmentIsUsedAStaleOrMismatchedOneIsNot) {
  const TimePoint now = std::chrono::system_clock::now();
  const CalibrationSet fresh = Set(0.01, 10, now - 2 * kDay);
  const std::string hash = fresh.environment.Hash();
  const auto month = std::chrono::seconds(30 * 86400);
  EXPECT_EQ(CalibrationUnusable(fresh, "cpu-amd-epyc", hash, now, month), "");
  EXPECT_EQ(CalibrationUnusable(fresh, "cpu-amd-epyc", "", now, month), "");
  EXPECT_THAT(CalibrationUnusable(Set(0.01, 10, now - 31 * kDay), "cpu-amd-epyc", hash, now, month),
              HasSubstr("stale: measured 31 days ago"));
  EXPECT_THAT(CalibrationUnusable(fresh, "h100-sxm5-80gb", hash, now, month), HasSubstr("cpu-amd-epyc"));
  CalibrationSet other = fresh;
  other.environment.fields["kernel"] = "6.8";
  EXPECT_THAT(CalibrationUnusable(other, "cpu-amd-epyc", hash, now, month),
              HasSubstr("another environment"));
  const auto used = GateCalibrations(fresh);
  ASSERT_EQ(used.count({"kernels/sgemm{m=512}", "time"}), 1u);
  EXPECT_THAT(used.at({"kernels/sgemm{m=512}", "time"}).source, HasSubstr("node n1, "));
}

TEST(CalibrationFile, RoundTripsWhatItWrote) {
  CalibrationSet set = Set(0.0123456789012345, 7, std::chrono::system_clock::from_time_t(1'790'000'000));
  const auto parsed = ParseCalibrationJson(WriteCalibrationJson(set), "cal.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->node, "n1");
  EXPECT_EQ(parsed->environment.sku, "cpu-amd-epyc");
  EXPECT_EQ(parsed->environment.fields, set.environment.fields);
  EXPECT_EQ(parsed->measured_at, set.measured_at);
  ASSERT_EQ(parsed->entries.size(), 1u);
  EXPECT_EQ(parsed->entries[0].spread, 0.0123456789012345);
  EXPECT_EQ(parsed->entries[0].processes, 7u);
  EXPECT_EQ(parsed->entries[0].direction, Direction::kLowerIsBetter);
  EXPECT_EQ(CalibrationSource(parsed->node, parsed->measured_at), "node n1, 2026-09-21");
}

TEST(CalibrationFile, RefusesBadValuesNamingTheField) {
  const std::string good =
      WriteCalibrationJson(Set(0.01, 7, std::chrono::system_clock::from_time_t(1'790'000'000)));
  auto with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return ParseCalibrationJson(text.replace(at, from.size(), to), "cal.json").status();
  };
  EXPECT_THAT(std::string(with("\"processes\": 7", "\"processes\": 1").message()),
              HasSubstr("cal.json: entries[0].processes: must be at least 2"));
  EXPECT_THAT(std::string(with("\"spread\": 0.01", "\"spread\": -0.5").message()),
              HasSubstr("entries[0].spread"));
  EXPECT_THAT(std::string(with("\"spread\": 0.01", "\"spread\": null").message()),
              HasSubstr("entries[0].spread: must be a number"));
  EXPECT_THAT(std::string(with("kernels/sgemm{m=512}", "sgemm").message()), HasSubstr("entries[0].benchmark"));
  EXPECT_THAT(std::string(with("\"kernel\": \"6.1\"", "\"kernel\": \"6.8\"").message()),
              HasSubstr("environment_hash"));
  EXPECT_THAT(std::string(with("perfgate-calibration", "perfgate-results").message()), HasSubstr("format"));
  EXPECT_THAT(std::string(ParseCalibrationJson("{", "cal.json").status().message()), HasSubstr("not JSON"));
}

// One run a side of a case whose medians moved from 10 to 13 ms, gated as
// two plain runs (gate --mode ab; a history gate of one candidate run would
// leave the change unconfirmed, tests/gate/confirm_test.cc).
GateInput OneRunAgainstOne() {
  GateInput input;
  input.mode = Mode::kAb;
  input.sku = "cpu-amd-epyc";
  auto run = [](const std::string& id, double ms) {
    CaseResult c = Process({ms, ms, ms});
    c.metrics.resize(1);
    for (Sample& s : c.samples) s.values.resize(1);
    c.benchmark = {"kernels", "sgemm", {{"m", "512"}}};
    return RunDataFromCases(id, {c});
  };
  input.candidate = run("cand", 13);
  input.baselines.push_back(run("base", 10));
  return input;
}

TEST(CalibrationGate, OneRunAgainstOneIsTooFewWithoutACalibrationAndARegressionWithOne) {
  GateInput input = OneRunAgainstOne();
  EXPECT_EQ(EvaluateGate(input, Policy{}).verdicts.at(0).verdict, Verdict::kTooFewRuns);
  input.calibrations = GateCalibrations(Set(0.01, 10, std::chrono::system_clock::now()));
  const GateResult r = EvaluateGate(input, Policy{});
  ASSERT_EQ(r.verdicts.size(), 1u);
  EXPECT_EQ(r.verdicts[0].method, Method::kCalibrated);
  EXPECT_EQ(r.verdicts[0].verdict, Verdict::kRegression);
  EXPECT_THAT(r.verdicts[0].note, HasSubstr("calibration of node n1"));
}

}  // namespace
}  // namespace perfgate::gate
