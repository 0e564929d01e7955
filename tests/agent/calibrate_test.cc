// `perfgate-agent calibrate` on a scripted side: a pilot sizes the
// processes, each process is one block, the spread is over their medians;
// the table says which cases are fit to gate single runs.
#include "agent/calibrate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <utility>
#include <vector>

#include "gate/calibration.h"

namespace perfgate::agent {
namespace {

using ::testing::HasSubstr;

AbCase TimeCase() {
  AbCase c;
  c.id = {"kernels", "sgemm", {{"m", "512"}}};
  c.metrics.push_back({"time", "ms", Direction::kLowerIsBetter});
  return c;
}

// Every call is one process: call n's samples are all levels[n] ms, and it
// reports that many milliseconds a sample as its wall time (the last level
// repeats); the sample counts asked for are recorded.
class ScriptedProcesses final : public Side {
 public:
  explicit ScriptedProcesses(std::vector<double> levels) : levels_(std::move(levels)) {}

  CaseResult Measure(const std::string& key, unsigned samples) override {
    const size_t call = asked_.size();
    asked_.push_back(samples);
    CaseResult r;
    r.benchmark = TimeCase().id;
    EXPECT_EQ(key, r.benchmark.Key());
    r.metrics = TimeCase().metrics;
    if (fail_on_call_ && call == *fail_on_call_) {
      r.status = CaseStatus::kFailed;
      r.reason = "verification failed";
      return r;
    }
    r.status = CaseStatus::kOk;
    const double level = levels_[std::min(call, levels_.size() - 1)];
    for (unsigned i = 0; i < samples; ++i) r.samples.push_back({i, {level}, false});
    r.seconds = level / 1000.0 * samples;  // the wall time a side reports: level ms a sample
    return r;
  }

  std::vector<unsigned> asked_;
  std::optional<size_t> fail_on_call_;

 private:
  std::vector<double> levels_;
};

TEST(CalibrateCase, APilotSizesTheProcessesAndTheSpreadIsOverTheirMedians) {
  // Pilot at 8 ms a sample: 0.5 s blocks are 62.5, so 63 samples.
  ScriptedProcesses side({8, 10, 11, 9});
  CalibrateOptions options;
  options.processes = 3;
  options.blocks.block_seconds = 0.5;
  const CaseCalibration r = CalibrateCase(TimeCase(), side, options);
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  EXPECT_EQ(side.asked_, (std::vector<unsigned>{options.blocks.min_block_samples, 63, 63, 63}));
  EXPECT_EQ(r.block_samples, 63u);
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(r.entries[0].benchmark, "kernels/sgemm{m=512}");
  EXPECT_EQ(r.entries[0].processes, 3u);
  // The pilot's 8 is not one of the processes: 10, 11, 9 are.
  EXPECT_NEAR(r.entries[0].spread, gate::LogSpread(std::vector<double>{10, 11, 9}), 1e-12);
}

TEST(CalibrateCase, AFailingProcessFailsTheCaseWithItsReasonAndNoSpread) {
  ScriptedProcesses side({10});
  side.fail_on_call_ = 2;
  CalibrateOptions options;
  options.processes = 5;
  const CaseCalibration r = CalibrateCase(TimeCase(), side, options);
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_THAT(r.reason, HasSubstr("process 2: failed: verification failed"));
  EXPECT_TRUE(r.entries.empty());
  EXPECT_EQ(side.asked_.size(), 3u);  // nothing measured after the failure
}

TEST(CalibrateCase, TheTableSaysWhichCasesAreFitToGateSingleRunsAtThePolicysTolerance) {
  CaseCalibration quiet{"kernels/copy{bytes=1}", CaseStatus::kOk, "", 50,
                        {{"kernels/copy{bytes=1}", "time", "ms", Direction::kLowerIsBetter, 0.002, 10}}};
  CaseCalibration noisy{"kernels/triad{bytes=1}", CaseStatus::kOk, "", 50,
                        {{"kernels/triad{bytes=1}", "time", "ms", Direction::kLowerIsBetter, 0.05, 10}}};
  CaseCalibration broken{"kernels/sgemm{m=512}", CaseStatus::kFailed, "process 1: failed: boom", 0, {}};
  const std::string table = RenderCalibrationTable({quiet, noisy, broken}, gate::Policy{}, "cpu-amd-epyc");
  std::vector<std::string> lines;
  for (size_t at = 0, next; at < table.size(); at = next + 1) {
    next = table.find('\n', at);
    lines.push_back(table.substr(at, next - at));
  }
  ASSERT_GE(lines.size(), 4u) << table;
  EXPECT_THAT(lines[1], HasSubstr("kernels/copy{bytes=1}"));
  EXPECT_THAT(lines[1], HasSubstr("0.20 %"));
  EXPECT_THAT(lines[1], ::testing::EndsWith(" fit"));
  EXPECT_THAT(lines[2], HasSubstr("kernels/triad{bytes=1}"));
  EXPECT_THAT(lines[2], ::testing::EndsWith("not fit"));
  EXPECT_THAT(lines[3], HasSubstr("failed: process 1: failed: boom"));
}

}  // namespace
}  // namespace perfgate::agent
