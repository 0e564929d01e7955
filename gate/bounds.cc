// A side that could only bound a metric (ValueBound: a knee beyond the
// rates a sweep covered) against a side that measured it. A bound is never
// a value: it fixes one end of the change and leaves the other open, so the
// verdict follows the pass contract on that end alone (docs/statistics.md,
// "Bounds").
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gate/gate_internal.h"

namespace perfgate::gate::internal {
namespace {

// The candidate's bound on the metric, when it measured no value of it.
std::optional<ValueBound> CandidateBound(const Entry& e) {
  const MetricData* cand = e.candidate;
  if (cand == nullptr || Usable(cand) || !cand->summary.bound) return std::nullopt;
  return cand->summary.bound;
}

// What the baseline runs that bounded the metric say together, when none
// measured it: the loosest bound of one kind (the lowest "at least", the
// highest "at most"); none when they bound it on both sides or not at all.
std::optional<ValueBound> BaselineBound(const Entry& e) {
  std::optional<ValueBound> out;
  for (const MetricData* run : e.baseline) {
    if (run == nullptr || Usable(run) || !run->summary.bound) continue;
    const ValueBound& b = *run->summary.bound;
    if (!out) {
      out = b;
    } else if (out->kind != b.kind) {
      return std::nullopt;
    } else {
      out->value = b.kind == ValueBound::Kind::kAtLeast ? std::min(out->value, b.value) : std::max(out->value, b.value);
    }
  }
  return out;
}

// One end of the change (> 0 worse) that a bound fixes: `worst` when the
// change can be no worse than `at`, else the change is at least `at`.
struct ChangeEnd {
  double at = 0;
  bool worst = false;
};

std::string BoundText(const ValueBound& b, const std::string& unit) {
  return absl::StrCat(b.kind == ValueBound::Kind::kAtLeast ? "at least " : "at most ", WithUnit(b.value, unit));
}

// The verdict from the end of the change the bound fixes: improvement or
// pass only when the worse end is known and within the tolerance, a
// regression only when the better end is known and beyond it, else
// undecided with what would decide it.
void DecideFromEnd(MetricVerdict& out, const ChangeEnd& end, const std::string& numbers) {
  const double tol = out.tolerance;
  out.change = end.at;
  out.method = Method::kNone;
  if (end.worst && end.at < -tol) {
    out.verdict = Verdict::kImprovement;
    out.note = absl::StrCat(numbers, ": better by at least ", Percent(-end.at), ", beyond the tolerance of ",
                            Percent(tol));
  } else if (end.worst && end.at <= tol) {
    out.verdict = Verdict::kPass;
    out.note = absl::StrCat(numbers, ": at worst ", SignedPercent(end.at), ", within the tolerance of ",
                            Percent(tol));
  } else if (!end.worst && end.at > tol) {
    out.verdict = Verdict::kRegression;
    out.note = absl::StrCat(numbers, ": worse by at least ", Percent(end.at), ", beyond the tolerance of ",
                            Percent(tol));
  } else {
    out.verdict = Verdict::kUndecided;
    out.note = absl::StrCat(numbers, ": the change is ", end.worst ? "at most " : "at least ",
                            SignedPercent(end.at), ", which neither rules out nor shows a change beyond the "
                            "tolerance of ", Percent(tol), "; measure the bounded side where it has a value "
                            "(for a knee, sweep rates past the bound)");
  }
}

// The change (> 0 worse) of one further run of the candidate's commit
// against `base`, at its better end: its value's, or its bound's when the
// bound fixes the better end; NaN when it says nothing of it.
double RepeatChangeAtLeast(const MetricData* run, double base, double sign) {
  if (Usable(run)) return sign * (run->summary.median / base - 1.0);
  if (run == nullptr || !run->summary.bound) return std::nan("");
  const ValueBound& b = *run->summary.bound;
  const bool better_end = (b.kind == ValueBound::Kind::kAtLeast) == (sign > 0);
  return better_end ? sign * (b.value / base - 1.0) : std::nan("");
}

// History: a regression one candidate run shows against the baseline level
// `base` is not a verdict until the further runs of its commit show it too
// (as Decide's Unconfirmed).
bool UnconfirmedByRepeats(Entry& e, double base, const std::string& numbers) {
  MetricVerdict& out = e.verdict;
  const double sign = out.direction == Direction::kHigherIsBetter ? -1.0 : 1.0;
  bool all = !e.repeats.empty();
  for (const MetricData* run : e.repeats) all = all && RepeatChangeAtLeast(run, base, sign) > out.tolerance;
  if (all) return false;
  out.verdict = Verdict::kUnconfirmed;
  out.note = absl::StrCat(numbers, ": worse by at least ", Percent(out.change), " in ",
                          e.repeats.empty() ? "one candidate run" : "some of the commit's runs only",
                          ", not a verdict until further runs of the same commit confirm it");
  return true;
}

}  // namespace

bool DecideBounded(Entry& e, const std::vector<double>& medians, Mode mode) {
  MetricVerdict& out = e.verdict;
  const double sign = out.direction == Direction::kHigherIsBetter ? -1.0 : 1.0;
  const std::optional<ValueBound> cand = CandidateBound(e);
  if (cand && !medians.empty()) {
    // The candidate's value lies beyond its bound; the baseline's level is
    // known to within its runs' spread, and the end is taken at the
    // baseline run least in the candidate's favour: a pass or an
    // improvement must hold against every baseline run, a regression too.
    const bool at_least = cand->kind == ValueBound::Kind::kAtLeast;
    const bool worst = at_least == (sign < 0);
    // change = sign * (value / base - 1) grows with base when sign < 0.
    const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
    const double base = worst == (sign < 0) ? *hi : *lo;
    const ChangeEnd end{sign * (cand->value / base - 1.0), worst};
    const std::string reason = e.candidate->summary.reason;
    const std::string numbers =
        absl::StrCat("candidate ", BoundText(*cand, out.unit), reason.empty() ? "" : absl::StrCat(" (", reason, ")"),
                     " against ", WithUnit(base, out.unit), " (the baseline run least in its favour of ",
                     out.baseline_runs, ")");
    DecideFromEnd(out, end, numbers);
    if (out.verdict == Verdict::kRegression && mode == Mode::kHistory) UnconfirmedByRepeats(e, base, numbers);
    e.decided = true;
    return true;
  }
  if (!Usable(e.candidate) || !medians.empty()) return false;
  const std::optional<ValueBound> base = BaselineBound(e);
  // A bound of 0 or less is no level to divide by: nothing is known then.
  if (!base || !(base->value > 0)) return false;
  // The baseline's level lies beyond its bound; the candidate's value is known.
  const double value = e.candidate->summary.median;
  out.candidate_median = value;
  const bool at_least = base->kind == ValueBound::Kind::kAtLeast;
  const ChangeEnd end{sign * (value / base->value - 1.0), at_least == (sign > 0)};
  const std::string numbers = absl::StrCat("candidate ", WithUnit(value, out.unit), " against a baseline of ",
                                           BoundText(*base, out.unit), " (it measured no value)");
  DecideFromEnd(out, end, numbers);
  if (out.verdict == Verdict::kRegression && mode == Mode::kHistory) UnconfirmedByRepeats(e, base->value, numbers);
  e.decided = true;
  return true;
}

}  // namespace perfgate::gate::internal
