// The gate's decisions about one metric: the verdicts that need no
// statistics (a missing or throttled candidate, an unfit environment, a
// floor, no baseline), and the verdict of a tested metric against its
// tolerance, each with a note a person can act on.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/stats.h"
#include "gate/gate_internal.h"

namespace perfgate::gate::internal {
namespace {

std::string PValue(double p) { return p < 1e-4 ? std::string("< 0.0001") : absl::StrFormat("%.4f", p); }

bool MissesFloor(double median, double floor, Direction direction) {
  // For lower-is-better metrics the "floor" is a ceiling: the worst value
  // still accepted.
  return direction == Direction::kHigherIsBetter ? median < floor : median > floor;
}

// A candidate with nothing to judge: every sample throttled, a case that ran
// nowhere (dropped), or missing. True when one of them decided the entry.
bool DecideUnusableCandidate(Entry& e, bool baseline_has_values, const std::string& over_runs) {
  MetricVerdict& out = e.verdict;
  const MetricData* cand = e.candidate;
  if (cand != nullptr && cand->summary.n == 0 && cand->summary.n_throttled > 0) {
    // Every sample throttled: the card, not the code, decided this number.
    e.decided = true;
    out.verdict = Verdict::kInvalidEnvironment;
    out.note = absl::StrCat("all ", cand->summary.n_throttled,
                            " samples of the candidate were throttled (clock or power/thermal "
                            "reasons); rerun on a healthy node");
    return true;
  }
  if (!Usable(cand) && !baseline_has_values &&
      (cand == nullptr || cand->summary.status == CaseStatus::kSkipped)) {
    // A case that cannot run here (a GPU case on a CPU runner) and never ran
    // in the baseline either says nothing about the code.
    e.decided = true;
    e.dropped = true;
    return true;
  }
  if (!Usable(cand)) {
    e.decided = true;
    out.verdict = Verdict::kMissing;
    if (cand == nullptr) {
      out.note = absl::StrCat("absent from the candidate run but present in ", over_runs,
                              " of the baseline; check that the case still runs under this name");
    } else {
      out.note = absl::StrCat("no usable samples in the candidate (case ",
                              ToString(cand->summary.status), cand->summary.reason.empty() ? "" : ": ",
                              cand->summary.reason, "); fix the case and rerun");
    }
    return true;
  }
  return false;
}

// A usable candidate that still cannot be compared: an unfit environment,
// mostly throttled samples, a missed floor, no baseline or a baseline of 0.
void DecideUsableCandidate(Entry& e, const std::vector<std::string>& invalid_reasons,
                           bool baseline_has_values, const std::string& over_runs) {
  MetricVerdict& out = e.verdict;
  const MetricData* cand = e.candidate;
  const std::string candidate_text = WithUnit(out.candidate_median, out.unit);
  if (!invalid_reasons.empty()) {
    e.decided = true;
    out.verdict = Verdict::kInvalidEnvironment;
    out.note = absl::StrCat("median ", candidate_text, "; not judged: ",
                            absl::StrJoin(invalid_reasons, "; "));
    return;
  }
  if (cand->summary.n_throttled > cand->summary.n) {
    e.decided = true;
    out.verdict = Verdict::kInvalidEnvironment;
    out.note = absl::StrCat(cand->summary.n_throttled, " of ",
                            cand->summary.n + cand->summary.n_throttled,
                            " candidate samples were throttled; the rest cannot stand for the code");
    return;
  }
  // An absolute floor needs no baseline, so it is checked first and wins.
  if (e.rule.floor && MissesFloor(out.candidate_median, *e.rule.floor, out.direction)) {
    e.decided = true;
    out.verdict = Verdict::kBelowFloor;
    const bool higher = out.direction == Direction::kHigherIsBetter;
    out.note = absl::StrCat("median ", candidate_text,
                            higher ? " is below the floor of " : " is above the ceiling of ",
                            WithUnit(*e.rule.floor, out.unit), " set by the policy");
    if (baseline_has_values) {
      absl::StrAppend(&out.note, " (baseline ", WithUnit(out.baseline_median, out.unit), ")");
    }
    return;
  }
  if (!baseline_has_values) {
    e.decided = true;
    out.verdict = Verdict::kNoBaseline;
    out.note = absl::StrCat("median ", candidate_text,
                            "; no comparable baseline run has this metric yet, so it gates once "
                            "the baseline has run it");
    return;
  }
  if (out.baseline_median == 0) {
    // A relative change from zero is undefined; only a floor could gate it.
    e.decided = true;
    out.verdict = Verdict::kNoBaseline;
    out.note = absl::StrCat("median ", candidate_text, " vs a baseline of 0 over ", over_runs,
                            ": relative change undefined; set a floor to gate this metric");
  }
}

// ", 2 rounds set aside as interference bursts", or nothing when none was.
std::string SetAside(const Entry& e) {
  if (e.set_aside == 0) return "";
  return e.set_aside == 1 ? std::string(", 1 round set aside as an interference burst")
                          : absl::StrCat(", ", e.set_aside, " rounds set aside as interference bursts");
}

// "2 candidate runs " where the candidate's commit ran more than once.
std::string CandidateRuns(const MetricVerdict& out) {
  return out.candidate_runs > 1 ? absl::StrCat(out.candidate_runs, " candidate runs ") : "";
}

// What a tested change rests on: the processes, the runs or the calibration.
std::string Basis(const Entry& e, Mode mode) {
  const MetricVerdict& out = e.verdict;
  switch (out.method) {
    case Method::kBlocks:
      return absl::StrCat(out.blocks, " processes a side", e.paired ? ", paired by round" : "",
                          " (", out.candidate_samples, " vs ", out.baseline_samples, " samples)",
                          SetAside(e));
    case Method::kHistory:
      return mode == Mode::kHistory
                 ? absl::StrCat(CandidateRuns(out), "against ", out.baseline_runs, " runs")
                 : absl::StrCat(out.blocks, " processes a side, t over their spread");
    case Method::kCalibrated:
      return absl::StrCat(CandidateRuns(out), "against ", out.baseline_runs,
                          out.baseline_runs == 1 ? " run" : " runs", ", run-to-run spread from the calibration of ", e.calibration_source);
    case Method::kNone:
      return absl::StrCat("against ", out.baseline_runs, out.baseline_runs == 1 ? " run" : " runs",
                          ", no test on this scale");
    case Method::kSamples:  // only stored reports carry it; this engine never tests so
      return absl::StrCat(out.candidate_samples, " vs ", out.baseline_samples, " samples");
    case Method::kCount:  // gate/counts.cc writes its own notes
      return "";
  }
  return "";
}

// The numbers a tested verdict's note starts with: medians, change, its
// interval, the p-values, and what they rest on.
std::string Numbers(const MetricVerdict& out, bool tested, const std::string& basis) {
  std::string numbers =
      absl::StrCat("median ", WithUnit(out.candidate_median, out.unit), " vs ",
                   WithUnit(out.baseline_median, out.unit), ", ", SignedPercent(out.change));
  if (std::isfinite(out.change_ci_high - out.change_ci_low)) {
    absl::StrAppend(&numbers, " [", SignedPercent(out.change_ci_low), ", ",
                    SignedPercent(out.change_ci_high), "]");
  }
  if (tested) {
    absl::StrAppend(&numbers, ", p ", PValue(out.p_value), " (adjusted ", PValue(out.p_adjusted),
                    ")");
  }
  absl::StrAppend(&numbers, ", ", basis);
  return numbers;
}

// History mode, a change that would be a regression: is it confirmed?
// One candidate run cannot tell a regression from a neighbour that slowed
// that run (interference only ever slows), so it is `unconfirmed` and says
// what to run; with several runs of the candidate's commit, every one must
// be beyond the tolerance on its own. False when the regression stands.
bool Unconfirmed(Entry& e, const std::string& numbers) {
  MetricVerdict& out = e.verdict;
  const std::string tol = Percent(out.tolerance);
  if (e.candidate_processes < 2) {
    out.verdict = Verdict::kUnconfirmed;
    out.note = absl::StrCat(
        numbers, "; worse than the tolerance of ", tol,
        " in one candidate run, which a neighbour slowing that run would also give: not a "
        "verdict until a second run confirms it. Measure the same commit again on a comparable "
        "node (perfgate-agent run with the same --branch and --commit, --filter '",
        out.benchmark, "') and gate again: the gate then judges every run of the commit");
    return true;
  }
  std::vector<std::string> within;
  for (size_t i = 0; i < e.run_changes.size(); ++i) {
    if (!(e.run_changes[i] > out.tolerance)) {
      within.push_back(absl::StrCat("run ", i + 1, " ", SignedPercent(e.run_changes[i])));
    }
  }
  if (within.empty()) return false;
  out.verdict = Verdict::kUnconfirmed;
  out.note = absl::StrCat(
      numbers, "; not confirmed: ", e.run_changes_by_best ? "in its best sample, " : "",
      absl::StrJoin(within, ", "), " of the candidate's ", e.run_changes.size(),
      " runs (run 1 the one gated) ", within.size() == 1 ? "is" : "are", " within the tolerance of ",
      tol, ", as when a neighbour slowed part or all of a run; a real slowdown slows every sample "
      "of every run. Measure the commit again, or gate it with perfgate-agent ab");
  return true;
}

// Why a metric whose interval reaches past the tolerance is not a pass.
std::string UndecidedWhy(const MetricVerdict& out) {
  if (!std::isfinite(out.change_ci_high)) {
    return absl::StrCat("no interval on this scale, so a regression beyond the tolerance of ",
                        Percent(out.tolerance), " cannot be ruled out: set a floor to gate this metric");
  }
  return absl::StrCat("not a pass: the worse end of the interval, ", SignedPercent(out.change_ci_high),
                      ", is beyond the tolerance of ", Percent(out.tolerance),
                      ", so a regression that size is not ruled out. More processes a side narrow "
                      "the interval");
}

}  // namespace

std::string WithUnit(double value, const std::string& unit) {
  std::string text = absl::StrFormat("%.4g", value);
  if (!unit.empty()) absl::StrAppend(&text, " ", unit);
  return text;
}

std::string Percent(double fraction) { return absl::StrFormat("%.1f %%", fraction * 100.0); }

std::string SignedPercent(double fraction) {
  return absl::StrFormat("%+.1f %%", fraction * 100.0);
}

bool Usable(const MetricData* m) {
  return m != nullptr && m->summary.status != CaseStatus::kFailed && m->summary.n > 0 &&
         std::isfinite(m->summary.median);
}

void DecideWithoutStatistics(Entry& e, const std::vector<std::string>& invalid_reasons, Mode mode) {
  MetricVerdict& out = e.verdict;
  std::vector<double> medians;
  for (const MetricData* run : e.baseline) {
    // A run whose samples were all throttled says nothing about the level.
    if (Usable(run)) medians.push_back(run->summary.median);
  }
  out.baseline_runs = static_cast<unsigned>(medians.size());
  if (!medians.empty()) out.baseline_median = stats::Median(medians);
  const std::string over_runs =
      absl::StrCat(out.baseline_runs, out.baseline_runs == 1 ? " run" : " runs");

  const MetricData* cand = e.candidate;
  if (cand != nullptr) {
    out.candidate_samples = cand->summary.n;
    out.candidate_noise = cand->summary.noise;
  }
  // A side that could only bound the metric (bounds.cc), on a fit machine.
  if (invalid_reasons.empty() && DecideBounded(e, medians, mode)) return;
  if (DecideUnusableCandidate(e, !medians.empty(), over_runs)) return;
  out.candidate_median = cand->summary.median;
  DecideUsableCandidate(e, invalid_reasons, !medians.empty(), over_runs);
}

void Decide(Entry& e, Mode mode, double fdr) {
  MetricVerdict& out = e.verdict;
  const double tol = out.tolerance;
  // Without a test (summaries only, too few runs) the change alone decides,
  // as the policy's tolerance is then the only guard.
  const bool tested = out.method != Method::kNone && std::isfinite(out.p_adjusted);
  const bool significant = !tested || out.p_adjusted <= fdr;
  const double width = out.change_ci_high - out.change_ci_low;
  const std::string numbers = Numbers(out, tested, Basis(e, mode));

  if (significant && out.change > tol && mode == Mode::kHistory && Unconfirmed(e, numbers)) {
    return;
  }
  // Unpaired processes too few for their ranks ever to be significant:
  // neither a regression nor a pass can rest on them, and the note says
  // what would.
  if (!significant && (out.change > tol || !(width <= 2 * tol))) {
    if (std::string why = UnreachableRanksNote(e, fdr); !why.empty()) {
      out.verdict = Verdict::kTooFewRuns;
      out.note = absl::StrCat(numbers, "; ", why);
      return;
    }
  }
  if (significant && out.change > tol) {
    out.verdict = Verdict::kRegression;
    out.note = absl::StrCat(numbers, "; worse than the tolerance of ", Percent(tol));
  } else if (e.rule.max_noise && std::isfinite(out.candidate_noise) &&
             out.candidate_noise > *e.rule.max_noise) {
    out.verdict = Verdict::kTooNoisy;
    out.note = absl::StrCat(numbers, "; candidate noise ", Percent(out.candidate_noise),
                            " is above the ", Percent(*e.rule.max_noise), " the policy allows");
  } else if (std::isinf(width)) {
    out.verdict = Verdict::kTooNoisy;
    out.note = absl::StrCat(numbers, "; too few processes to bound a 95 % interval, so no change "
                            "can be ruled out: measure more");
  } else if (std::isfinite(width) && width > 2 * tol) {
    out.verdict = Verdict::kTooNoisy;
    out.note = absl::StrCat(numbers, "; the interval is wider than twice the tolerance of ",
                            Percent(tol), ", so a regression that size could hide in it");
  } else if (significant && out.change < -tol) {
    out.verdict = Verdict::kImprovement;
    out.note = absl::StrCat(numbers, "; better by more than the tolerance of ", Percent(tol));
  } else if (!(out.change_ci_high <= tol)) {
    // The pass contract: a pass rules a regression beyond the tolerance out,
    // so the worse end of the interval must lie within it. Without an
    // interval (values no log scale takes) nothing is ruled out.
    out.verdict = Verdict::kUndecided;
    out.note = absl::StrCat(numbers, "; ", UndecidedWhy(out));
  } else {
    out.verdict = Verdict::kPass;
    out.note = absl::StrCat(numbers, "; within the tolerance of ", Percent(tol),
                            ": the interval rules out a regression beyond it");
  }
}

}  // namespace perfgate::gate::internal
