// The gate engine: judges every metric of a candidate run against a baseline
// under a policy (methodology.md §4). Pure domain code shared by the
// coordinator (history gates over stored runs), the CLI (offline `compare`)
// and the agent (`ab`, which measures both sides and decides on the spot):
// no database, no wire.
//
// Each metric is tested in one of three ways, always with its direction
// taken into account so that a positive change is worse:
//   - samples: A/B, or history with fewer than kMinHistoryRuns baseline runs.
//     The change of medians with a seeded bootstrap CI and the two-sided
//     Mann–Whitney U p-value over the unthrottled samples — over the block
//     medians when both sides were measured in kMinBlocks or more blocks.
//   - history: the candidate's median against the medians of K >= 3 runs;
//     their spread is the between-run noise, with a Student-t interval.
//   - none: only summaries are known and no test applies; the change alone.
// The p-values of all metrics of one gate are corrected together with
// Benjamini–Hochberg before any verdict is given.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "common/model.h"
#include "gate/policy.h"

namespace perfgate::gate {

/// What the gate decided about one metric.
enum class Verdict {
  kPass,
  kRegression,
  kImprovement,
  kBelowFloor,
  kMissing,
  kNoBaseline,
  kTooNoisy,
  kInvalidEnvironment,
};

/// Lower-case name: "pass", "regression", "improvement", "below_floor", ...
const char* ToString(Verdict v);

/// How a metric's change was tested.
enum class Method { kNone, kSamples, kHistory };
/// "none", "samples" (bootstrap CI + Mann–Whitney U), "history" (t interval).
const char* ToString(Method m);

/// Fewer comparable baseline runs than this and the history gate compares
/// samples instead: two run medians say nothing about between-run noise.
inline constexpr unsigned kMinHistoryRuns = 3;
/// Blocks a side needs before the test counts blocks instead of samples.
inline constexpr unsigned kMinBlocks = 3;

/// One metric of one run: its summary and, where known, its unthrottled
/// samples (summaries alone suffice for floors and the history test).
struct MetricData {
  MetricSummary summary;
  std::vector<double> samples;
  /// The samples form this many contiguous, equal blocks, each measured by
  /// its own process (the rounds of an A/B job). Processes land a little
  /// apart, so with 3 or more blocks a side the block is the unit the test
  /// counts, not the sample: samples of one process are not independent.
  unsigned blocks = 1;
};

/// One run as the gate sees it.
struct RunData {
  std::string run_id;
  std::vector<MetricData> metrics;
  /// Why the run's environment is unfit for gating (throttling, ECC errors,
  /// a degraded PCIe link...); empty when it is fit.
  std::vector<std::string> invalid_reasons;
};

/// The gate's view of cases measured outside the coordinator (a result file,
/// one side of an A/B job): parts of one case joined in order (the last part
/// that says how the case ended decides its status), each metric summarized
/// over its unthrottled samples, throttled ones counted. `blocks` as in
/// MetricData.
RunData RunDataFromCases(const std::string& run_id, const std::vector<CaseResult>& cases,
                         unsigned blocks = 1);

/// Everything one gate looks at.
struct GateInput {
  Mode mode = Mode::kHistory;
  std::string sku;
  RunData candidate;
  /// History: comparable runs, same node first, newest first. A/B: one run,
  /// the baseline side measured interleaved with the candidate.
  std::vector<RunData> baselines;
  /// Resamples of the bootstrap CI of each change; fewer only where the
  /// interval matters less than speed (the simulation's thousands of gates).
  unsigned bootstrap_resamples = 2000;
};

/// The decision about one metric.
struct MetricVerdict {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  std::string benchmark, metric, unit;
  Direction direction = Direction::kLowerIsBetter;
  double baseline_median = kNaN;
  double candidate_median = kNaN;
  double change = kNaN;  // relative change of medians, > 0 is worse
  double change_ci_low = kNaN, change_ci_high = kNaN;  // 95 % interval of change
  double p_value = kNaN;     // two-sided, before correction
  double p_adjusted = kNaN;  // after Benjamini–Hochberg over the gate's metrics
  Method method = Method::kNone;
  double tolerance = 0;
  double floor = kNaN;
  double candidate_noise = kNaN;  // within-run stdev/mean of the candidate
  Verdict verdict = Verdict::kPass;
  bool gating = true;
  unsigned candidate_samples = 0;
  unsigned baseline_samples = 0;  // samples compared (method samples)
  unsigned blocks = 0;  // blocks a side the test counted; 0 when it counted samples
  unsigned baseline_runs = 0;
  std::string note;
};

/// The gate's overall outcome; also the exit code of the commands that gate.
enum class Outcome {
  kPass = 0,          // no gating metric regressed
  kRegression = 1,    // a gating metric regressed, missed its floor or is missing
  kInconclusive = 3,  // nothing failed, but a gating metric could not be judged
};
/// "pass", "regression" or "inconclusive".
const char* ToString(Outcome o);

/// The gate's overall result.
struct GateResult {
  Mode mode = Mode::kHistory;
  std::vector<MetricVerdict> verdicts;  // worst first
  Outcome outcome = Outcome::kPass;
  std::string summary;  // one sentence
  std::vector<std::string> invalid_reasons;  // of the candidate and the baselines
};

/// Judges every metric present in the candidate or any baseline run.
GateResult EvaluateGate(const GateInput& input, const Policy& policy);

/// Whether a verdict fails a gate when the metric is gating.
bool Fails(Verdict v);
/// Whether a verdict leaves a gating metric undecided (too noisy, no
/// baseline, invalid environment).
bool Inconclusive(Verdict v);

}  // namespace perfgate::gate
