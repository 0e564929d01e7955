#include "coordinator/gate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfgate::coordinator {
namespace {

// Four significant digits: enough to see a few-percent change, short enough
// for one line.
std::string WithUnit(double value, const std::string& unit) {
  std::string text = absl::StrFormat("%.4g", value);
  if (!unit.empty()) absl::StrAppend(&text, " ", unit);
  return text;
}

std::string Percent(double fraction) { return absl::StrFormat("%.1f %%", fraction * 100.0); }

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

bool MissesFloor(double median, double floor, Direction direction) {
  // For lower-is-better metrics the "floor" is a ceiling: the worst value
  // still accepted.
  return direction == Direction::kHigherIsBetter ? median < floor : median > floor;
}

// Order in which verdicts are listed: what fails the gate first, what is
// good news last.
int Rank(Verdict v) {
  switch (v) {
    case Verdict::kRegression:
    case Verdict::kBelowFloor:
    case Verdict::kMissing:
      return 0;
    case Verdict::kTooNoisy:
      return 1;
    case Verdict::kNoBaseline:
      return 2;
    case Verdict::kPass:
      return 3;
    case Verdict::kImprovement:
      return 4;
  }
  return 5;
}

bool Fails(Verdict v) {
  return v == Verdict::kRegression || v == Verdict::kBelowFloor || v == Verdict::kMissing;
}

// What the summary says about the worst failing metric.
std::string Describe(const MetricVerdict& v) {
  const std::string what = absl::StrCat(v.benchmark, " ", v.metric);
  switch (v.verdict) {
    case Verdict::kRegression:
      return absl::StrCat(what, " ", Percent(v.change), " worse (tolerance ", Percent(v.tolerance),
                          ")");
    case Verdict::kBelowFloor:
      return absl::StrCat(what, " ", WithUnit(v.candidate_median, v.unit),
                          v.direction == Direction::kHigherIsBetter ? " below its floor of "
                                                                    : " above its ceiling of ",
                          WithUnit(v.floor, v.unit));
    case Verdict::kMissing:
      return absl::StrCat(what, " missing from the candidate");
    default:
      return what;
  }
}

}  // namespace

const char* ToString(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kBelowFloor:
      return "below_floor";
    case Verdict::kMissing:
      return "missing";
    case Verdict::kNoBaseline:
      return "no_baseline";
    case Verdict::kTooNoisy:
      return "too_noisy";
  }
  return "unknown";
}

MetricVerdict MedianToleranceDecider::Decide(const DecisionInput& in) const {
  MetricVerdict out;
  out.benchmark = in.benchmark;
  out.metric = in.metric;
  out.unit = in.unit;
  out.direction = in.direction;
  out.tolerance = in.rule.tolerance;
  out.gating = in.rule.gating;
  if (in.rule.floor) out.floor = *in.rule.floor;

  std::vector<double> medians;
  for (const MetricSummary* run : in.baseline) {
    // A run whose samples were all throttled says nothing about the level.
    if (run != nullptr && run->n > 0 && std::isfinite(run->median)) medians.push_back(run->median);
  }
  out.baseline_runs = static_cast<unsigned>(medians.size());
  if (!medians.empty()) out.baseline_median = Median(medians);
  const std::string over_runs =
      absl::StrCat(out.baseline_runs, out.baseline_runs == 1 ? " run" : " runs");

  if (in.candidate == nullptr || in.candidate->n == 0 || !std::isfinite(in.candidate->median)) {
    out.verdict = Verdict::kMissing;
    if (in.candidate == nullptr) {
      out.note = absl::StrCat("absent from the candidate run but present in ", over_runs,
                              " of the baseline; check that the case still runs under this name");
    } else {
      out.candidate_samples = in.candidate->n;
      out.note = absl::StrCat(
          "no usable samples in the candidate (case ", ToString(in.candidate->status),
          in.candidate->reason.empty() ? "" : ": ", in.candidate->reason,
          in.candidate->n_throttled > 0
              ? absl::StrCat(", ", in.candidate->n_throttled, " throttled samples left out")
              : "",
          "); fix the case or the node's clocks and rerun");
    }
    return out;
  }
  out.candidate_samples = in.candidate->n;
  out.candidate_median = in.candidate->median;
  const std::string candidate_text = WithUnit(out.candidate_median, out.unit);

  // An absolute floor needs no baseline, so it is checked first and wins.
  if (in.rule.floor && MissesFloor(out.candidate_median, *in.rule.floor, out.direction)) {
    out.verdict = Verdict::kBelowFloor;
    const bool higher = out.direction == Direction::kHigherIsBetter;
    out.note = absl::StrCat("median ", candidate_text,
                            higher ? " is below the floor of " : " is above the ceiling of ",
                            WithUnit(*in.rule.floor, out.unit), " set by the policy");
    if (!medians.empty()) {
      absl::StrAppend(&out.note, " (baseline ", WithUnit(out.baseline_median, out.unit), ")");
    }
    return out;
  }

  if (medians.empty()) {
    out.verdict = Verdict::kNoBaseline;
    out.note = absl::StrCat("median ", candidate_text,
                            "; no comparable baseline run has this metric yet, so it gates once "
                            "the baseline branch has run it");
    return out;
  }
  if (out.baseline_median == 0) {
    // A relative change from zero is undefined; only a floor could gate it.
    out.verdict = Verdict::kNoBaseline;
    out.note = absl::StrCat("median ", candidate_text, " vs a baseline of 0 over ", over_runs,
                            ": relative change undefined; set a floor to gate this metric");
    return out;
  }

  const double delta = out.candidate_median - out.baseline_median;
  out.change =
      (out.direction == Direction::kLowerIsBetter ? delta : -delta) / std::abs(out.baseline_median);
  if (out.change > out.tolerance) {
    out.verdict = Verdict::kRegression;
  } else if (out.change < -out.tolerance) {
    out.verdict = Verdict::kImprovement;
  } else {
    out.verdict = Verdict::kPass;
  }
  const bool worse = out.change > 0;
  out.note = absl::StrCat("median ", candidate_text, " vs baseline ",
                          WithUnit(out.baseline_median, out.unit), " over ", over_runs, ": ",
                          Percent(std::abs(out.change)), worse ? " worse" : " better",
                          out.verdict == Verdict::kPass ? ", within tolerance " : ", tolerance ",
                          Percent(out.tolerance));
  return out;
}

GateResult EvaluateGate(const std::string& sku, const std::vector<MetricSummary>& candidate,
                        const std::vector<std::vector<MetricSummary>>& baseline_runs,
                        const Policy& policy, const Decider& decider) {
  using MetricKey = std::pair<std::string, std::string>;
  struct Entry {
    DecisionInput input;
    bool described = false;  // unit and direction taken from some run
  };
  std::map<MetricKey, Entry> entries;

  auto entry_for = [&](const MetricSummary& s) -> Entry& {
    Entry& e = entries[{s.benchmark, s.metric}];
    if (!e.described) {
      // The candidate is seen first, so its unit and direction win; a metric
      // only in the baseline takes them from the newest baseline run.
      e.input.benchmark = s.benchmark;
      e.input.metric = s.metric;
      e.input.unit = s.unit;
      e.input.direction = s.direction;
      e.described = true;
    }
    return e;
  };
  for (const MetricSummary& s : candidate) {
    Entry& e = entry_for(s);
    if (e.input.candidate == nullptr) e.input.candidate = &s;
  }
  for (const std::vector<MetricSummary>& run : baseline_runs) {
    // One summary per run: a run that repeats a metric counts once.
    std::set<MetricKey> seen;
    for (const MetricSummary& s : run) {
      if (seen.insert({s.benchmark, s.metric}).second) entry_for(s).input.baseline.push_back(&s);
    }
  }

  GateResult result;
  for (auto& [key, e] : entries) {
    e.input.rule = policy.Resolve(sku, e.input.benchmark, e.input.metric);
    result.verdicts.push_back(decider.Decide(e.input));
  }

  std::stable_sort(result.verdicts.begin(), result.verdicts.end(),
                   [](const MetricVerdict& a, const MetricVerdict& b) {
                     const int ra = Rank(a.verdict), rb = Rank(b.verdict);
                     if (ra != rb) return ra < rb;
                     // Larger change is worse; a verdict without a change
                     // (missing, floor without baseline) follows the measured ones.
                     const bool na = std::isnan(a.change), nb = std::isnan(b.change);
                     if (na != nb) return nb;
                     if (!na && a.change != b.change) return a.change > b.change;
                     return std::tie(a.benchmark, a.metric) < std::tie(b.benchmark, b.metric);
                   });

  size_t failing = 0, advisory_failing = 0;
  const MetricVerdict* worst = nullptr;
  for (const MetricVerdict& v : result.verdicts) {
    if (!Fails(v.verdict)) continue;
    if (v.gating) {
      ++failing;
      if (worst == nullptr) worst = &v;
    } else {
      ++advisory_failing;
    }
  }
  result.regression = failing > 0;
  const size_t total = result.verdicts.size();
  const std::string of_total =
      absl::StrCat(" of ", total, total == 1 ? " metric" : " metrics", " on ", sku);
  if (worst != nullptr) {
    result.summary = absl::StrCat(failing, of_total, " regressed; worst: ", Describe(*worst));
  } else {
    result.summary = absl::StrCat("no gating metric regressed (", total,
                                  total == 1 ? " metric" : " metrics", " on ", sku, ")");
  }
  if (advisory_failing > 0) {
    absl::StrAppend(&result.summary, "; ", advisory_failing, " advisory ",
                    advisory_failing == 1 ? "metric" : "metrics",
                    " also regressed without failing the gate");
  }
  return result;
}

}  // namespace perfgate::coordinator
