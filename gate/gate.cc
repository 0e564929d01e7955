// EvaluateGate: every metric of the candidate and the baselines through the
// gate (gate_internal.h names the steps), the p-values corrected together,
// the verdicts ordered worst first and summed up in one sentence.
#include "gate/gate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/count_metrics.h"
#include "common/stats.h"
#include "gate/inference.h"
#include "gate/counts.h"
#include "gate/gate_internal.h"
#include "gate/report.h"

namespace perfgate::gate {
namespace internal {
namespace {

// Log values of process medians; empty when any is not positive (the log
// scale, and so every test here, needs positive values).
std::vector<double> Logs(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v) {
    if (!(x > 0) || !std::isfinite(x)) return {};
    out.push_back(std::log(x));
  }
  return out;
}

// A run's best sample (its fastest time, its highest throughput), where its
// summary has one: interference only ever slows, so a neighbour over part of
// a run leaves its best sample where it was, while a real slowdown moves it.
double Best(const MetricData& m, bool higher) {
  const double best = higher ? m.summary.max : m.summary.min;
  return std::isfinite(best) && best > 0 ? best : std::numeric_limits<double>::quiet_NaN();
}

// History: the candidate's further runs of the same commit join it as
// processes; the candidate's median becomes the median of its runs'. For
// the confirmation rule, each run's best sample against the history's level
// (the median of its runs' medians) is kept: a real slowdown moves every
// sample of every run, a neighbour only the samples it overlaps. A run
// whose summary has no best sample is taken by its median.
void AddRepeats(Entry& e, std::vector<double>& cand) {
  MetricVerdict& out = e.verdict;
  const bool higher = out.direction == Direction::kHigherIsBetter;
  std::vector<const MetricData*> runs = {e.candidate};
  for (const MetricData* r : e.repeats) {
    if (!Usable(r)) continue;
    const std::vector<double> p = ProcessMedians(*r);
    cand.insert(cand.end(), p.begin(), p.end());
    runs.push_back(r);
    out.candidate_samples += r->summary.n;
  }
  out.candidate_runs = static_cast<unsigned>(runs.size());
  if (runs.size() < 2) return;
  std::vector<double> medians;
  for (const MetricData* r : runs) medians.push_back(r->summary.median);
  out.candidate_median = stats::Median(medians);
  e.run_changes_by_best = std::all_of(runs.begin(), runs.end(), [&](const MetricData* r) {
    return std::isfinite(Best(*r, higher));
  });
  for (const MetricData* r : runs) {
    e.run_changes.push_back(gate::RelativeChange(
        out.baseline_median, e.run_changes_by_best ? Best(*r, higher) : r->summary.median, higher));
  }
}

}  // namespace

void SetShift(MetricVerdict& out, const gate::ShiftEstimate& s) {
  const bool higher = out.direction == Direction::kHigherIsBetter;
  const double sign = higher ? -1.0 : 1.0;
  out.change = gate::ChangeFromLogRatio(sign * s.shift, higher);
  const double a = gate::ChangeFromLogRatio(sign * s.ci.low, higher);
  const double b = gate::ChangeFromLogRatio(sign * s.ci.high, higher);
  out.change_ci_low = std::min(a, b);
  out.change_ci_high = std::max(a, b);
  out.p_value = s.p_value;
}

bool Test(Entry& e, Mode mode, const Calibration* calibration) {
  MetricVerdict& out = e.verdict;
  std::vector<double> base;
  for (const MetricData* run : e.baseline) {
    if (!Usable(run)) continue;
    const std::vector<double> p = ProcessMedians(*run);
    base.insert(base.end(), p.begin(), p.end());
    out.baseline_samples += run->summary.n;
  }
  std::vector<double> cand = ProcessMedians(*e.candidate);
  if (mode == Mode::kHistory) AddRepeats(e, cand);
  e.candidate_processes = static_cast<unsigned>(cand.size());
  const std::vector<double> lb = Logs(base), lc = Logs(cand);
  if (lb.empty() || lc.empty()) {
    // Zero or negative values: no log scale, no test; the change alone.
    out.method = Method::kNone;
    out.change = gate::RelativeChange(out.baseline_median, out.candidate_median,
                                       out.direction == Direction::kHigherIsBetter);
    return true;
  }
  out.blocks = static_cast<unsigned>(std::min(lb.size(), lc.size()));
  // Runs of one commit against a history are few on both sides: the t test
  // over their spread, never ranks (3 runs against 5 cannot reach q by ranks).
  if (out.candidate_runs < 2 && TestBlocks(e, lb, lc)) return true;
  return TestSpread(e, mode, calibration, lb, lc);
}

}  // namespace internal

namespace {

using internal::Entry;
using MetricKey = std::pair<std::string, std::string>;

// Order in which verdicts are listed: what fails the gate first, what is
// good news last.
int Rank(Verdict v) {
  switch (v) {
    case Verdict::kRegression:
    case Verdict::kBelowFloor:
    case Verdict::kMissing:
      return 0;
    case Verdict::kInvalidEnvironment:
    case Verdict::kUnconfirmed:
      return 1;
    case Verdict::kTooNoisy:
    case Verdict::kTooFewRuns:
    case Verdict::kUndecided:
      return 2;
    case Verdict::kNoBaseline:
      return 3;
    case Verdict::kPass:
      return 4;
    case Verdict::kImprovement:
      return 5;
  }
  return 6;
}

// What the summary says about the worst failing metric.
std::string Describe(const MetricVerdict& v) {
  using internal::Percent;
  using internal::WithUnit;
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
      return absl::StrCat(what, " ", ToString(v.verdict));
  }
}

// One entry per metric of the candidate or any baseline run, and the
// invalid reasons of all of them.
std::map<MetricKey, Entry> CollectEntries(const GateInput& input, GateResult& result) {
  std::map<MetricKey, Entry> entries;
  auto entry_for = [&](const MetricData& m) -> Entry& {
    Entry& e = entries[{m.summary.benchmark, m.summary.metric}];
    if (!e.described) {
      // The candidate is seen first, so its unit and direction win; a metric
      // only in the baseline takes them from the newest baseline run.
      e.verdict.benchmark = m.summary.benchmark;
      e.verdict.metric = m.summary.metric;
      e.verdict.unit = m.summary.unit;
      e.verdict.direction = m.summary.direction;
      e.described = true;
    }
    return e;
  };
  for (const MetricData& m : input.candidate.metrics) {
    Entry& e = entry_for(m);
    if (e.candidate == nullptr) e.candidate = &m;
  }
  for (const RunData& run : input.candidate_repeats) {
    std::set<MetricKey> seen;
    for (const MetricData& m : run.metrics) {
      auto it = entries.find({m.summary.benchmark, m.summary.metric});
      if (it == entries.end() || it->second.candidate == nullptr) continue;
      Entry& e = it->second;
      if (m.summary.unit != e.verdict.unit || m.summary.direction != e.verdict.direction) continue;
      if (seen.insert(it->first).second) e.repeats.push_back(&m);
    }
  }
  result.invalid_reasons = input.candidate.invalid_reasons;
  for (const RunData& run : input.baselines) {
    for (const std::string& r : run.invalid_reasons) {
      result.invalid_reasons.push_back(absl::StrCat("baseline run ", run.run_id, ": ", r));
    }
    // One entry per run: a run that repeats a metric counts once.
    std::set<MetricKey> seen;
    for (const MetricData& m : run.metrics) {
      Entry& e = entry_for(m);
      // Another unit or direction under the same name is another metric:
      // never compared with the candidate's.
      if (m.summary.unit != e.verdict.unit || m.summary.direction != e.verdict.direction) continue;
      if (seen.insert({m.summary.benchmark, m.summary.metric}).second) e.baseline.push_back(&m);
    }
  }
  return entries;
}

// Statistics first, for every metric; then the p-values corrected together
// (Benjamini–Hochberg), as the correction needs all of them.
void TestAll(std::map<MetricKey, Entry>& entries, const GateInput& input, const Policy& policy,
             const std::vector<std::string>& invalid_reasons) {
  std::vector<Entry*> tested;
  for (auto& [key, e] : entries) {
    e.rule = policy.Resolve(input.sku, e.verdict.benchmark, e.verdict.metric, input.mode);
    e.confidence = policy.confidence;
    const bool counted = IsCountMetric(e.verdict.metric);
    e.verdict.tolerance = counted ? internal::CountTolerance(e.verdict.metric, policy) : e.rule.tolerance;
    e.verdict.gating = e.rule.gating;
    if (e.rule.floor) e.verdict.floor = *e.rule.floor;
    internal::DecideWithoutStatistics(e, invalid_reasons, input.mode);
    if (e.decided) continue;
    if (counted) {
      internal::DecideCounted(e);
      continue;
    }
    const auto cal = input.calibrations.find({e.verdict.benchmark, e.verdict.metric});
    if (!internal::Test(e, input.mode, cal == input.calibrations.end() ? nullptr : &cal->second)) {
      e.decided = true;
      continue;
    }
    if (std::isfinite(e.verdict.p_value)) tested.push_back(&e);
  }
  std::vector<double> p;
  for (const Entry* e : tested) p.push_back(e->verdict.p_value);
  const std::vector<double> adjusted = gate::BenjaminiHochberg(p);
  for (size_t i = 0; i < tested.size(); ++i) {
    tested[i]->verdict.p_adjusted = adjusted[i];
    tested[i]->tested_metrics = tested.size();
  }
}

// Worst first: by verdict, then by change (larger is worse), then by name.
void SortVerdicts(std::vector<MetricVerdict>& verdicts) {
  std::stable_sort(verdicts.begin(), verdicts.end(), [](const MetricVerdict& a, const MetricVerdict& b) {
    const int ra = Rank(a.verdict), rb = Rank(b.verdict);
    if (ra != rb) return ra < rb;
    // Larger change is worse; a verdict without a change
    // (missing, floor without baseline) follows the measured ones.
    const bool na = std::isnan(a.change), nb = std::isnan(b.change);
    if (na != nb) return nb;
    if (!na && a.change != b.change) return a.change > b.change;
    return std::tie(a.benchmark, a.metric) < std::tie(b.benchmark, b.metric);
  });
}

// The outcome and its one-sentence summary, from the sorted verdicts.
void Summarize(GateResult& result, const std::string& sku, const Policy& policy) {
  size_t failing = 0, undecided = 0, advisory_failing = 0;
  const MetricVerdict* worst = nullptr;
  const MetricVerdict* first_undecided = nullptr;
  for (const MetricVerdict& v : result.verdicts) {
    if (Fails(v.verdict)) {
      if (v.gating) {
        ++failing;
        if (worst == nullptr) worst = &v;
      } else {
        ++advisory_failing;
      }
    } else if (Inconclusive(v.verdict) && v.gating) {
      ++undecided;
      if (first_undecided == nullptr) first_undecided = &v;
    }
  }
  const size_t total = result.verdicts.size();
  const std::string metrics_text =
      absl::StrCat(total, total == 1 ? " metric" : " metrics", " on ", sku, ", ",
                   ToString(result.mode), " gate");
  if (total == 0) {
    // Nothing compared is never a pass, whatever the policy does with
    // undecided metrics: a gate that saw no metric has said nothing.
    result.outcome = Outcome::kInconclusive;
    result.summary = absl::StrCat("nothing compared: no metric on ", sku, " in the candidate or the ",
                                  "baseline that the ", ToString(result.mode), " gate could judge");
  } else if (worst != nullptr) {
    result.outcome = Outcome::kRegression;
    result.summary =
        absl::StrCat(failing, " of ", metrics_text, " failed; worst: ", Describe(*worst));
  } else if (undecided > 0 && policy.inconclusive != InconclusiveAction::kPass) {
    result.outcome = policy.inconclusive == InconclusiveAction::kFail ? Outcome::kRegression
                                                                      : Outcome::kInconclusive;
    result.summary = absl::StrCat(undecided, " of ", metrics_text, " could not be judged (first: ",
                                  Describe(*first_undecided), ")");
    if (policy.inconclusive == InconclusiveAction::kFail) {
      absl::StrAppend(&result.summary, "; the policy fails undecided metrics");
    }
  } else {
    result.outcome = Outcome::kPass;
    result.summary = absl::StrCat("no gating metric regressed (", metrics_text, ")");
    if (undecided > 0) {
      absl::StrAppend(&result.summary, "; ", undecided,
                      " could not be judged and the policy passes them");
    }
  }
  if (advisory_failing > 0) {
    absl::StrAppend(&result.summary, "; ", advisory_failing, " advisory ",
                    advisory_failing == 1 ? "metric" : "metrics",
                    " also regressed without failing the gate");
  }
  if (!result.invalid_reasons.empty()) {
    absl::StrAppend(&result.summary, "; environment unfit for gating: ",
                    absl::StrJoin(result.invalid_reasons, "; "));
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
    case Verdict::kInvalidEnvironment:
      return "invalid_environment";
    case Verdict::kTooFewRuns:
      return "too_few_runs";
    case Verdict::kUnconfirmed:
      return "unconfirmed";
    case Verdict::kUndecided:
      return "undecided";
  }
  return "unknown";
}

const char* ToString(Method m) {
  switch (m) {
    case Method::kNone:
      return "none";
    case Method::kBlocks:
      return "blocks";
    case Method::kHistory:
      return "history";
    case Method::kCalibrated:
      return "calibrated";
    case Method::kSamples:
      return "samples";
    case Method::kCount:
      return "count";
  }
  return "none";
}

const char* ToString(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kRegression:
      return "regression";
    case Outcome::kInconclusive:
      return "inconclusive";
  }
  return "pass";
}

const char* ToString(StopReason reason) {
  switch (reason) {
    case StopReason::kNone: return "";
    case StopReason::kDecided: return "decided";
    case StopReason::kRounds: return "rounds";
    case StopReason::kBudget: return "budget";
    case StopReason::kMaxRounds: return "max_rounds";
    case StopReason::kOverBudget: return "over_budget";
    case StopReason::kFailed: return "failed";
    case StopReason::kError: return "error";
    case StopReason::kCounted: return "counted";
  }
  return "";
}

bool Fails(Verdict v) {
  return v == Verdict::kRegression || v == Verdict::kBelowFloor || v == Verdict::kMissing;
}

bool Inconclusive(Verdict v) {
  return v == Verdict::kTooNoisy || v == Verdict::kNoBaseline ||
         v == Verdict::kInvalidEnvironment || v == Verdict::kTooFewRuns ||
         v == Verdict::kUnconfirmed || v == Verdict::kUndecided;
}

bool Undecided(const MetricVerdict& v) {
  return v.gating && (v.verdict == Verdict::kTooNoisy || v.verdict == Verdict::kTooFewRuns ||
                      v.verdict == Verdict::kUndecided);
}

namespace {

// The round of the look after the one at `rounds`: a quarter more, and at
// least one more.
unsigned NextLook(unsigned rounds) { return std::max(rounds + 1, (rounds * 5 + 3) / 4); }

}  // namespace

bool StopRuleLooksAt(unsigned rounds, unsigned min_rounds, unsigned max_rounds) {
  if (rounds < min_rounds) return false;
  if (rounds >= max_rounds) return true;
  unsigned look = std::max(min_rounds, 1u);
  while (look < rounds) look = NextLook(look);
  return look == rounds;
}

unsigned StopRuleLooks(unsigned min_rounds, unsigned max_rounds) {
  unsigned looks = 1;
  for (unsigned r = std::max(min_rounds, 1u); r < max_rounds; r = NextLook(r)) ++looks;
  return looks;
}

double ConfirmationBudget(double case_budget_s, double first_s, unsigned first_rounds, unsigned min_rounds) {
  const double rest = std::max(case_budget_s - first_s, case_budget_s * (1 - kFirstMeasurementShare));
  if (first_rounds == 0) return rest;
  const double pace = first_s / static_cast<double>(first_rounds);
  return std::max(rest, static_cast<double>(std::max(first_rounds, min_rounds) + 1) * pace);
}

double ExtensionBudget(double case_budget_s, double first_s, unsigned first_rounds, unsigned min_rounds,
                       unsigned max_rounds) {
  if (first_rounds == 0 || first_rounds >= max_rounds || !(case_budget_s > first_s)) return 0;
  unsigned look = std::max(first_rounds + 1, min_rounds);
  while (!StopRuleLooksAt(look, min_rounds, max_rounds)) ++look;
  const double pace = first_s / static_cast<double>(first_rounds);
  const double rest = case_budget_s - first_s;
  return rest >= static_cast<double>(look - first_rounds) * pace ? rest : 0;
}

double ConfirmationExtensionBudget(double confirmation_s, unsigned rounds, unsigned min_rounds, unsigned max_rounds) {
  return ExtensionBudget(2 * confirmation_s, confirmation_s, rounds, min_rounds, max_rounds);
}

Policy LookPolicy(const Policy& policy, size_t cases, unsigned looks) {
  Policy strict = policy;
  const double share = static_cast<double>(std::max<size_t>(cases, 1)) * static_cast<double>(std::max(looks, 1u));
  strict.fdr = policy.fdr / share;
  strict.confidence = 1 - (1 - policy.confidence) / static_cast<double>(std::max(looks, 1u));
  return strict;
}

GateResult EvaluateGate(const GateInput& input, const Policy& policy) {
  GateResult result;
  result.mode = input.mode;
  std::map<MetricKey, Entry> entries = CollectEntries(input, result);
  TestAll(entries, input, policy, result.invalid_reasons);
  for (auto& [key, e] : entries) {
    if (e.dropped) continue;
    if (!e.decided) internal::Decide(e, input.mode, policy.fdr);
    result.verdicts.push_back(std::move(e.verdict));
  }
  NoteWitnesses(result.verdicts);  // where the runs hold counts beside time
  SumUp(result, input.sku, policy);
  return result;
}

void SumUp(GateResult& result, const std::string& sku, const Policy& policy) {
  SortVerdicts(result.verdicts);
  Summarize(result, sku, policy);
}

GateResult SummarizeVerdicts(std::vector<MetricVerdict> verdicts, Mode mode, const std::string& sku,
                             const Policy& policy, std::vector<std::string> invalid_reasons) {
  GateResult result;
  result.mode = mode;
  result.verdicts = std::move(verdicts);
  result.invalid_reasons = std::move(invalid_reasons);
  SumUp(result, sku, policy);
  return result;
}

}  // namespace perfgate::gate
