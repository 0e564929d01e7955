// The gate engine: judges every metric of a candidate run against a baseline
// under a policy (docs/statistics.md). Pure domain code shared by the
// coordinator (history gates over stored runs), the CLI (offline `compare`)
// and the agent (`ab`, which measures both sides and decides on the spot):
// no database, no wire.
//
// The unit of evidence is the process, not the sample: samples taken by one
// process share its luck (placement, clocks, the library heuristic it chose,
// a neighbour's burst), so the spread between processes dominates the spread
// within one. Each side is reduced to one value per process (the median of
// that process's samples), on a log scale so that a metric and its reciprocal
// agree, and then tested in one of these ways:
//   - blocks: 3 or more processes a side (A/B rounds, several result files
//     per side). Hodges–Lehmann shift with the Mann–Whitney interval and
//     p-value over the process medians: rank-based, so a process hit by a
//     burst moves one rank.
//   - history: fewer than 3 a side, but the series' own processes show their
//     spread (a history of K >= 3 runs, or 2 + 2 processes): Student t with
//     the pooled between-process spread.
//   - calibrated: as history, with the spread (also) from a stored
//     calibration of this node and case (perfgate-agent calibrate).
//   - none: values that cannot be put on a log scale; the change alone.
// With none of those, the metric is "too few runs": it says what to run.
// A history gate confirms before it blocks: a regression on one candidate
// run is "unconfirmed" (inconclusive, saying what to run), and runs of the
// candidate's commit (GateInput::candidate_repeats) decide together only
// when every one of them is beyond the tolerance in its best sample.
// The p-values of all metrics of one gate are corrected together with
// Benjamini–Hochberg before any verdict is given.
#pragma once

#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/run_types.h"
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
  kTooFewRuns,  // fewer processes than any test of between-process spread needs
  /// History mode: one candidate run would regress, but one run cannot tell
  /// a regression from a neighbour's burst over that run. Inconclusive until
  /// a second run of the same commit confirms it (docs/statistics.md).
  kUnconfirmed,
  /// The change's interval still reaches beyond the tolerance on the worse
  /// side when measuring ended: a regression that size is not ruled out, so
  /// this is no pass (docs/statistics.md, "The pass contract"). The note
  /// names the interval and what more would decide it.
  kUndecided,
};

/// Lower-case name: "pass", "regression", "improvement", "below_floor", ...
const char* ToString(Verdict v);

/// How a metric's change was tested. kSamples (samples against samples) is
/// never produced by EvaluateGate: reports stored before the process became
/// the unit of evidence carry it, and they are still shown.
enum class Method { kNone, kBlocks, kHistory, kCalibrated, kSamples, kCount };
/// "none", "blocks" (Hodges–Lehmann + Mann–Whitney over process medians),
/// "history" (t over the series' between-process spread), "calibrated" (t
/// with a stored calibration's spread), "samples", "count" (counted metrics,
/// gate/counts.h: the change against the count tolerance, no test).
const char* ToString(Method m);

/// Processes a side the rank test needs; also the history length from which
/// the coordinator reads summaries only.
inline constexpr unsigned kMinHistoryRuns = 3;
inline constexpr unsigned kMinBlocks = 3;

/// One metric of one run: its summary and, where known, its unthrottled
/// samples (summaries alone suffice for floors and the history test).
struct MetricData {
  MetricSummary summary;
  std::vector<double> samples;
  /// The samples form this many contiguous, equal blocks, each measured by
  /// its own process (the rounds of an A/B job). The process, not the
  /// sample, is the unit the gate counts.
  unsigned blocks = 1;
  /// Where the blocks are not equal (several result files per side): the
  /// sample count of each process, in order. Overrides `blocks` when it
  /// adds up to the samples.
  std::vector<unsigned> block_sizes;
  /// The blocks are the rounds of an interleaved A/B job, in round order:
  /// block i of either side was measured next to block i of the other, so
  /// the test pairs them (which cancels drift both blocks of a round share).
  bool rounds = false;
  /// The process medians themselves, where they were computed when the run
  /// was stored (ProcessMedians of its samples then): used instead of the
  /// samples and blocks above.
  std::optional<std::vector<double>> process_medians;
};

/// The medians of the processes behind one metric of one run: the stored
/// process_medians, else one per block (block_sizes, else `blocks` equal
/// blocks), or the summary's median for a run of one process. Empty when
/// the metric has no usable value.
std::vector<double> ProcessMedians(const MetricData& m);

/// A measured run-to-run spread of one metric on one node: the standard
/// deviation of the log process medians of `processes` A/A processes.
struct Calibration {
  double spread = 0;        // stdev of log(process median)
  unsigned processes = 0;   // degrees of freedom: processes - 1
  std::string source;       // where it came from, for the note ("node n1, 2026-11-20")
};

/// One run as the gate sees it.
struct RunData {
  std::string run_id;
  std::vector<MetricData> metrics;
  /// Why the run's environment is unfit for gating (throttling, ECC errors,
  /// a degraded PCIe link...); empty when it is fit.
  std::vector<std::string> invalid_reasons;
};

/// How the samples of one case divide into the processes that took them:
/// the sample count of each (throttled samples included), in order.
struct CaseBlocks {
  std::vector<unsigned> sizes;
  bool rounds = false;  // as MetricData::rounds
};

/// The gate's view of cases measured outside the coordinator (result files,
/// the sides of an A/B job): parts of one case joined in order (the last part
/// that says how the case ended decides its status), each metric summarized
/// over its unthrottled samples, throttled ones counted. `blocks` says, by
/// benchmark key, which processes took a case's samples; a case absent from
/// it was measured by one process.
RunData RunDataFromCases(const std::string& run_id, const std::vector<CaseResult>& cases,
                         const std::map<std::string, CaseBlocks>& blocks = {});

/// Everything one gate looks at.
struct GateInput {
  Mode mode = Mode::kHistory;
  std::string sku;
  RunData candidate;
  /// History: comparable runs, same node first, newest first. A/B: one run,
  /// the baseline side measured interleaved with the candidate.
  std::vector<RunData> baselines;
  /// History only: further runs of the candidate's commit, comparable with
  /// it (same SKU and match fields), newest first. Each is one more
  /// candidate process; with one or more, a regression is confirmed only
  /// when the candidate's runs together are significant and every one of
  /// them is beyond the tolerance on its own.
  std::vector<RunData> candidate_repeats;
  /// Calibrated run-to-run spreads, by (benchmark key, metric name), of the
  /// node the candidate ran on; used where too few processes show their own.
  std::map<std::pair<std::string, std::string>, Calibration> calibrations;
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
  unsigned baseline_samples = 0;
  unsigned blocks = 0;  // processes a side the test counted (the fewer side's)
  unsigned baseline_runs = 0;
  unsigned candidate_runs = 1;  // history: runs of the candidate's commit judged
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

/// Orders result.verdicts worst first and sets result.outcome and
/// result.summary from them as EvaluateGate does, for a caller that changed
/// verdicts after the gate (an A/B confirmation cut short, a case whose
/// minimum rounds could not fit its budget).
void SumUp(GateResult& result, const std::string& sku, const Policy& policy);
/// Orders verdicts decided outside EvaluateGate (counted metrics, time and
/// counts combined: gate/counts.h) worst first and sums them up as
/// EvaluateGate does.
GateResult SummarizeVerdicts(std::vector<MetricVerdict> verdicts, Mode mode, const std::string& sku,
                             const Policy& policy, std::vector<std::string> invalid_reasons = {});

/// Whether a verdict fails a gate when the metric is gating.
bool Fails(Verdict v);
/// Whether a verdict leaves a gating metric undecided (too noisy, too few
/// runs, unconfirmed, undecided, no baseline, invalid environment).
bool Inconclusive(Verdict v);

/// Whether more processes could change what the gate says about this metric:
/// it is gating and too noisy, has too few runs, or is undecided (the worse
/// end of its interval beyond its tolerance: a regression that size is not
/// ruled out yet). The stop rule of adaptive A/B (agent/ab.h) and of its
/// simulation (gate/simulate.h).
bool Undecided(const MetricVerdict& v);

/// Whether the adaptive A/B stop rule looks at a case after `rounds` rounds:
/// at min_rounds, then each time the rounds have grown by a quarter (5, 7,
/// 9, 12, 15, 19, 24, 30, 38, 45 with the defaults), and at max_rounds.
bool StopRuleLooksAt(unsigned rounds, unsigned min_rounds, unsigned max_rounds);

/// How many looks the stop rule takes at one case between min_rounds and
/// max_rounds (at least 1): 10 with the defaults (5 to 45).
unsigned StopRuleLooks(unsigned min_rounds, unsigned max_rounds);

/// The share of a case's budget (--case-budget) an adaptive A/B's first
/// measurement gets when a confirmation may follow.
inline constexpr double kFirstMeasurementShare = 2.0 / 3.0;

/// The seconds an adaptive A/B's confirmation of one case may take, when
/// its first measurement took `first_s` over `first_rounds` rounds: what
/// the first left of `case_budget_s`, at least the rest of its share, and
/// at least the time of as many rounds as the first took (min_rounds at
/// least), one to spare, at the first's pace. A confirmation with fewer
/// rounds than the first would throw evidence away: at a noisy stretch the
/// first measurement ends at its budget, and a confirmation on what little
/// is left only comes out too noisy. So a suspected case may take up to
/// about four thirds of its case budget (docs/statistics.md).
double ConfirmationBudget(double case_budget_s, double first_s, unsigned first_rounds, unsigned min_rounds);

/// The seconds an adaptive A/B's case may measure on after a first
/// measurement that ended undecided at its budget (`first_s` over
/// `first_rounds` rounds) with no gating metric a suspect: what the first
/// left of `case_budget_s`, the share kept for a confirmation it does not
/// need. 0 when that cannot reach the stop rule's next look at the first's
/// pace (more rounds without a look decide nothing), or the case has its
/// max_rounds. The rounds go on under the same looks, so the case is judged
/// as one measurement with the whole case budget would be.
double ExtensionBudget(double case_budget_s, double first_s, unsigned first_rounds, unsigned min_rounds,
                       unsigned max_rounds);

/// The seconds an adaptive A/B's confirmation may measure on when it ended
/// at its budget (`confirmation_s` over `rounds` rounds) still undecided:
/// as much time again, from its rounds, under the same looks (so it is
/// judged as one confirmation of twice the time would be); 0 when that
/// cannot reach the stop rule's next look at its pace, or it has its
/// max_rounds. A suspected case that measures on twice may take about three
/// times its case budget; `--time-budget` bounds the job.
double ConfirmationExtensionBudget(double confirmation_s, unsigned rounds, unsigned min_rounds, unsigned max_rounds);

/// The policy a look of the adaptive stop rule judges one case with, alone
/// among `cases`: fdr / cases / looks for a regression, and an interval of
/// level 1 - (1 - confidence) / looks for a pass, so that stopping at the
/// first look that passes cannot pass a regression beyond the tolerance
/// more often than one look at the full level would (docs/statistics.md).
Policy LookPolicy(const Policy& policy, size_t cases, unsigned looks);

}  // namespace perfgate::gate
