#include "gate/counts.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/stats.h"
#include "gate/gate_internal.h"

namespace perfgate::gate {
namespace {

using MetricKey = std::pair<std::string, std::string>;

// One side's counts of one metric: a value per process, and why there are
// none where a case did not run.
struct SideCounts {
  const MetricSpec* spec = nullptr;
  std::vector<double> values;
  std::string not_ok;  // the case's status and reason where it did not end ok
};

std::map<MetricKey, SideCounts> Collect(const std::vector<CaseResult>& cases) {
  std::map<MetricKey, SideCounts> out;
  for (const CaseResult& c : cases) {
    for (size_t i = 0; i < c.metrics.size(); ++i) {
      SideCounts& side = out[{c.benchmark.Key(), c.metrics[i].name}];
      side.spec = &c.metrics[i];
      if (c.status != CaseStatus::kOk) {
        side.not_ok = absl::StrCat(ToString(c.status), c.reason.empty() ? "" : ": ", c.reason);
        continue;
      }
      for (const Sample& s : c.samples) {
        if (i < s.values.size() && std::isfinite(s.values[i]) && s.values[i] > 0) side.values.push_back(s.values[i]);
      }
    }
  }
  return out;
}

std::string Pct(double fraction) { return absl::StrFormat("%+.3f %%", fraction * 100.0); }

void Judge(MetricVerdict& v, const SideCounts& base, const SideCounts& cand) {
  internal::JudgeCounted(v, internal::CountedSide::Of(base.values), internal::CountedSide::Of(cand.values));
}

}  // namespace

namespace internal {

CountedSide CountedSide::Of(const std::vector<double>& values) {
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return {stats::Median(values), *lo, *hi, static_cast<unsigned>(values.size())};
}

void JudgeCounted(MetricVerdict& v, const CountedSide& base, const CountedSide& cand) {
  v.method = Method::kCount;
  v.baseline_median = base.median;
  v.candidate_median = cand.median;
  v.baseline_samples = base.processes;
  v.candidate_samples = cand.processes;
  v.blocks = std::min(v.baseline_samples, v.candidate_samples);
  v.baseline_runs = 1;
  const double sign = v.direction == Direction::kHigherIsBetter ? -1.0 : 1.0;
  v.change = sign * (v.candidate_median / v.baseline_median - 1.0);
  // The range of the changes between every pair of processes: its ends are
  // the pairs of one side's extreme against the other's.
  const double a = sign * (cand.min / base.max - 1.0), b = sign * (cand.max / base.min - 1.0);
  v.change_ci_low = std::min({v.change, a, b});
  v.change_ci_high = std::max({v.change, a, b});
  const double spread = std::max(base.max / base.min - 1.0, cand.max / cand.min - 1.0);
  const std::string counted = absl::StrFormat(
      "counted: %.6g vs %.6g %s, %s, %u vs %u process(es)", v.candidate_median, v.baseline_median, v.unit,
      Pct(v.change), v.candidate_samples, v.baseline_samples);
  if (spread > v.tolerance) {
    v.verdict = Verdict::kTooNoisy;
    v.note = absl::StrCat(counted, "; processes of one side differ by ", Pct(spread),
                          ", more than the count tolerance: the count depends on more than the code");
  } else if (v.change > v.tolerance) {
    v.verdict = Verdict::kRegression;
    v.note = absl::StrCat(counted, "; beyond the count tolerance of ", Pct(v.tolerance));
  } else if (v.change < -v.tolerance) {
    v.verdict = Verdict::kImprovement;
    v.note = absl::StrCat(counted, "; better by more than the count tolerance of ", Pct(v.tolerance));
  } else if (v.change_ci_high > v.tolerance) {
    // The pass contract holds for counts too: some pair of processes is
    // beyond the tolerance, so a regression that size is not ruled out.
    v.verdict = Verdict::kUndecided;
    v.note = absl::StrCat(counted, "; not a pass: a pair of processes differs by ", Pct(v.change_ci_high),
                          ", beyond the count tolerance of ", Pct(v.tolerance), ": count more processes a side");
  } else {
    v.verdict = Verdict::kPass;
    v.note = absl::StrCat(counted, "; within the count tolerance of ", Pct(v.tolerance));
  }
}

double CountTolerance(const std::string& metric, const Policy& policy) {
  return IsLooseCount(metric) ? policy.sim_tolerance : policy.count_tolerance;
}

namespace {

// One run's processes of a counted metric: each sample (or stored process
// median) one process's count; where only the summary was read, its
// median and extremes over its n processes.
CountedSide SideOf(const MetricData& m) {
  if (m.process_medians && !m.process_medians->empty()) return CountedSide::Of(*m.process_medians);
  if (!m.samples.empty()) return CountedSide::Of(m.samples);
  const MetricSummary& s = m.summary;
  return {s.median, std::isfinite(s.min) ? s.min : s.median, std::isfinite(s.max) ? s.max : s.median,
          std::max(s.n, 1u)};
}

}  // namespace

void DecideCounted(Entry& e) {
  // The nearest baseline run that counted it (same node first, newest
  // first): counts move with the code, so runs of older commits are no
  // level to take a median of.
  const MetricData* base = nullptr;
  for (const MetricData* run : e.baseline) {
    if (Usable(run)) {
      base = run;
      break;
    }
  }
  JudgeCounted(e.verdict, SideOf(*base), SideOf(*e.candidate));
  if (e.baseline.size() > 1) {
    absl::StrAppend(&e.verdict.note, "; the baseline is the nearest of ", e.baseline.size(),
                    " baseline runs (same node first, newest first): counts move with the code");
  }
  e.decided = true;
}

}  // namespace internal

GateResult JudgeCounts(const std::vector<CaseResult>& baseline, const std::vector<CaseResult>& candidate,
                       const Policy& policy, const std::string& sku) {
  const std::map<MetricKey, SideCounts> base = Collect(baseline), cand = Collect(candidate);
  std::map<MetricKey, const SideCounts*> keys;
  for (const auto& [key, side] : base) keys[key] = &side;
  for (const auto& [key, side] : cand) keys[key] = &side;
  std::vector<MetricVerdict> verdicts;
  for (const auto& [key, any] : keys) {
    MetricVerdict v;
    v.benchmark = key.first;
    v.metric = key.second;
    v.unit = any->spec->unit;
    v.direction = any->spec->direction;
    v.method = Method::kCount;
    v.tolerance = internal::CountTolerance(v.metric, policy);
    v.gating = policy.Resolve(sku, v.benchmark, v.metric, Mode::kAb).gating;
    const auto b = base.find(key);
    const auto c = cand.find(key);
    if (c == cand.end() || c->second.values.empty()) {
      v.verdict = Verdict::kMissing;
      v.note = c == cand.end() ? "the candidate has no such count" : absl::StrCat("candidate: ", c->second.not_ok);
    } else if (b == base.end() || b->second.values.empty()) {
      v.verdict = Verdict::kNoBaseline;
      v.note = b == base.end() ? "the baseline has no such count" : absl::StrCat("baseline: ", b->second.not_ok);
    } else {
      Judge(v, b->second, c->second);
    }
    verdicts.push_back(std::move(v));
  }
  return SummarizeVerdicts(std::move(verdicts), Mode::kAb, sku, policy);
}

namespace {

bool Moved(const MetricVerdict& v) { return v.verdict == Verdict::kRegression; }
bool Held(const MetricVerdict& v) { return v.verdict == Verdict::kPass || v.verdict == Verdict::kImprovement; }

// What the counts of a case say about one of its time verdicts; "" when
// they say nothing (no count verdict, or neither decided).
std::string Witness(const MetricVerdict& time, const MetricVerdict& count) {
  const std::string counts = absl::StrCat(count.metric, " ", Pct(count.change));
  if (Moved(time) && Moved(count)) {
    return absl::StrCat("time and count both regressed (", counts, "): the strongest evidence of a regression in the code");
  }
  if (Moved(time) && Held(count)) {
    return absl::StrCat("the counts did not move (", counts,
                        "): a time regression with the same work done is the machine's (noise, throttling, a "
                        "neighbour) or memory's; confirm it by more rounds");
  }
  if (Held(time) && Moved(count)) {
    return absl::StrCat("the counts regressed (", counts,
                        ") while time held: code that does more work but is not (yet) on the critical path");
  }
  if (Inconclusive(time.verdict) && Moved(count)) {
    return absl::StrCat("time could not decide yet, the counts did (", counts,
                        ", a regression): the code does more work; more rounds tell whether it costs time here");
  }
  if (Inconclusive(time.verdict) && Held(count)) {
    return absl::StrCat("time could not decide yet; the counts did not move (", counts, ")");
  }
  return "";
}

}  // namespace

void NoteWitnesses(std::vector<MetricVerdict>& verdicts) {
  // Per case, its instruction count's verdict (else its first count's).
  std::map<std::string, MetricVerdict> count_of;
  for (const MetricVerdict& c : verdicts) {
    if (c.method != Method::kCount) continue;
    auto [it, fresh] = count_of.try_emplace(c.benchmark, c);
    if (!fresh && c.metric == kInstructionsMetric) it->second = c;
  }
  for (MetricVerdict& v : verdicts) {
    if (v.method == Method::kCount) continue;
    if (auto it = count_of.find(v.benchmark); it != count_of.end()) {
      if (const std::string w = Witness(v, it->second); !w.empty()) v.note = absl::StrCat(v.note, "; ", w);
    }
  }
}

GateResult CombineWitnesses(const GateResult& time, const GateResult& counts, const Policy& policy,
                            const std::string& sku) {
  std::vector<MetricVerdict> all = time.verdicts;
  all.insert(all.end(), counts.verdicts.begin(), counts.verdicts.end());
  NoteWitnesses(all);
  return SummarizeVerdicts(std::move(all), time.mode, sku, policy, time.invalid_reasons);
}

}  // namespace perfgate::gate
