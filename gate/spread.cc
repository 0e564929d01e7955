// The gate's t test, for fewer than 3 processes a side: the change of the
// mean log process medians over the between-process spread pooled from both
// sides (a history of K runs, 2 + 2 processes) and, where one is stored,
// from a calibration of the candidate's node. With no spread at all the
// metric is "too few runs", with what to run.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gate/inference.h"
#include "common/stats.h"
#include "gate/gate_internal.h"

namespace perfgate::gate::internal {
namespace {

// Sum of squared deviations from the mean, and its degrees of freedom.
std::pair<double, double> SumSquares(const std::vector<double>& v) {
  if (v.size() < 2) return {0.0, 0.0};
  const double mean = stats::Mean(v);
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {ss, static_cast<double>(v.size() - 1)};
}

std::string Processes(size_t n) { return absl::StrCat(n, n == 1 ? " process" : " processes"); }

// The too_few_runs verdict: the change alone, and what would let it be judged.
void TooFewRuns(MetricVerdict& out, Mode mode, size_t base_processes, size_t cand_processes) {
  const bool higher = out.direction == Direction::kHigherIsBetter;
  out.method = Method::kNone;
  out.change = gate::RelativeChange(out.baseline_median, out.candidate_median, higher);
  out.verdict = Verdict::kTooFewRuns;
  out.note = absl::StrCat(
      "median ", WithUnit(out.candidate_median, out.unit), " vs ",
      WithUnit(out.baseline_median, out.unit), ", ", SignedPercent(out.change), "; not judged: ",
      Processes(cand_processes), " vs ", Processes(base_processes),
      " cannot show how far runs of this case move on their own (samples of one process share "
      "its luck). ",
      mode == Mode::kHistory
          ? "Run the baseline branch until it has 3 comparable runs, or calibrate this node "
            "(perfgate-agent calibrate)"
          : "Measure 3 or more processes a side (perfgate-agent ab, or several result files per "
            "side), or calibrate this node (perfgate-agent calibrate)");
}

}  // namespace

bool TestSpread(Entry& e, Mode mode, const Calibration* calibration,
                const std::vector<double>& log_base, const std::vector<double>& log_cand) {
  MetricVerdict& out = e.verdict;
  // Too few processes for ranks: a t test needs the between-process spread,
  // from the processes themselves (pooled over both sides), a calibration
  // of this node, or both.
  auto [ss_b, df_b] = SumSquares(log_base);
  auto [ss_c, df_c] = SumSquares(log_cand);
  double ss = ss_b + ss_c, df = df_b + df_c;
  const bool own = df >= 2;
  const bool calibrated = calibration != nullptr && calibration->processes >= 2;
  if (calibrated) {
    const double cdf = calibration->processes - 1.0;
    ss += cdf * calibration->spread * calibration->spread;
    df += cdf;
  }
  if (!own && !calibrated) {
    TooFewRuns(out, mode, log_base.size(), log_cand.size());
    return false;
  }
  SetShift(out, gate::TShift(stats::Mean(log_base), static_cast<unsigned>(log_base.size()),
                              stats::Mean(log_cand), static_cast<unsigned>(log_cand.size()),
                              std::sqrt(ss / df), df, e.confidence));
  out.method = calibrated ? Method::kCalibrated : Method::kHistory;
  if (calibrated) {
    e.calibration_source = calibration->source;
  }
  return true;
}

}  // namespace perfgate::gate::internal
