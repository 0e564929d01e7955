#include "gate/gate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "gate/inference.h"
#include "common/stats.h"

namespace perfgate::gate {
namespace {

// Four significant digits: enough to see a few-percent change, short enough
// for one line.
std::string WithUnit(double value, const std::string& unit) {
  std::string text = absl::StrFormat("%.4g", value);
  if (!unit.empty()) absl::StrAppend(&text, " ", unit);
  return text;
}

std::string Percent(double fraction) { return absl::StrFormat("%.1f %%", fraction * 100.0); }

std::string SignedPercent(double fraction) {
  return absl::StrFormat("%+.1f %%", fraction * 100.0);
}

std::string PValue(double p) { return p < 1e-4 ? std::string("< 0.0001") : absl::StrFormat("%.4f", p); }

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
    case Verdict::kInvalidEnvironment:
      return 1;
    case Verdict::kTooNoisy:
    case Verdict::kTooFewRuns:
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

// One metric on its way through the gate.
struct Entry {
  MetricVerdict verdict;
  const MetricData* candidate = nullptr;
  std::vector<const MetricData*> baseline;  // one per baseline run having it
  ResolvedRule rule;
  bool decided = false;  // verdict final before the statistics
  bool dropped = false;  // skipped everywhere: nothing to judge, nothing to report
  bool described = false;
  std::string calibration_source;  // the calibration a t test used, if any
  bool paired = false;             // the blocks were tested as rounds
};

// A failed case's numbers are not the code's (a wrong result, a crashed
// rank), whatever samples it took before failing.
bool Usable(const MetricData* m) {
  return m != nullptr && m->summary.status != CaseStatus::kFailed && m->summary.n > 0 &&
         std::isfinite(m->summary.median);
}

// Verdicts that need no statistics: missing, all throttled, floor, no baseline.
void DecideWithoutStatistics(Entry& e, const std::vector<std::string>& invalid_reasons) {
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
  if (cand != nullptr && cand->summary.n == 0 && cand->summary.n_throttled > 0) {
    // Every sample throttled: the card, not the code, decided this number.
    e.decided = true;
    out.verdict = Verdict::kInvalidEnvironment;
    out.note = absl::StrCat("all ", cand->summary.n_throttled,
                            " samples of the candidate were throttled (clock or power/thermal "
                            "reasons); rerun on a healthy node");
    return;
  }
  if (!Usable(cand) && medians.empty() &&
      (cand == nullptr || cand->summary.status == CaseStatus::kSkipped)) {
    // A case that cannot run here (a GPU case on a CPU runner) and never ran
    // in the baseline either says nothing about the code.
    e.decided = true;
    e.dropped = true;
    return;
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
    return;
  }
  out.candidate_median = cand->summary.median;
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
    if (!medians.empty()) {
      absl::StrAppend(&out.note, " (baseline ", WithUnit(out.baseline_median, out.unit), ")");
    }
    return;
  }
  if (medians.empty()) {
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
    return;
  }
}

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

// Sum of squared deviations from the mean, and its degrees of freedom.
std::pair<double, double> SumSquares(const std::vector<double>& v) {
  if (v.size() < 2) return {0.0, 0.0};
  const double mean = stats::Mean(v);
  double ss = 0;
  for (double x : v) ss += (x - mean) * (x - mean);
  return {ss, static_cast<double>(v.size() - 1)};
}

std::string Processes(size_t n) { return absl::StrCat(n, n == 1 ? " process" : " processes"); }

// The change, its interval and its p-value, by the strongest test the
// processes allow; false (and the verdict too_few_runs) when none applies.
bool Test(Entry& e, Mode mode, const Calibration* calibration) {
  MetricVerdict& out = e.verdict;
  const bool higher = out.direction == Direction::kHigherIsBetter;
  std::vector<double> base;
  for (const MetricData* run : e.baseline) {
    if (!Usable(run)) continue;
    const std::vector<double> p = ProcessMedians(*run);
    base.insert(base.end(), p.begin(), p.end());
    out.baseline_samples += run->summary.n;
  }
  const std::vector<double> cand = ProcessMedians(*e.candidate);
  const std::vector<double> lb = Logs(base), lc = Logs(cand);
  if (lb.empty() || lc.empty()) {
    // Zero or negative values: no log scale, no test; the change alone.
    out.method = Method::kNone;
    out.change = stats::RelativeChange(out.baseline_median, out.candidate_median, higher);
    return true;
  }
  const double sign = higher ? -1.0 : 1.0;
  auto orient = [&](const stats::ShiftEstimate& s) {
    out.change = stats::ChangeFromLogRatio(sign * s.shift, higher);
    const double a = stats::ChangeFromLogRatio(sign * s.ci.low, higher);
    const double b = stats::ChangeFromLogRatio(sign * s.ci.high, higher);
    out.change_ci_low = std::min(a, b);
    out.change_ci_high = std::max(a, b);
    out.p_value = s.p_value;
  };
  out.blocks = static_cast<unsigned>(std::min(lb.size(), lc.size()));
  const bool paired = e.baseline.size() == 1 && e.baseline.front()->rounds && e.candidate->rounds &&
                      lb.size() == lc.size();
  if (paired && lb.size() >= kMinBlocks) {
    std::vector<double> d(lb.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = lc[i] - lb[i];
    orient(stats::HodgesLehmannPaired(d));
    out.method = Method::kBlocks;
    e.paired = true;
    return true;
  }
  if (lb.size() >= kMinBlocks && lc.size() >= kMinBlocks) {
    orient(stats::HodgesLehmannShift(lb, lc));
    out.method = Method::kBlocks;
    return true;
  }
  // Too few processes for ranks: a t test needs the between-process spread,
  // from the processes themselves (pooled over both sides), a calibration
  // of this node, or both.
  auto [ss_b, df_b] = SumSquares(lb);
  auto [ss_c, df_c] = SumSquares(lc);
  double ss = ss_b + ss_c, df = df_b + df_c;
  const bool own = df >= 2;
  const bool calibrated = calibration != nullptr && calibration->processes >= 2;
  if (calibrated) {
    const double cdf = calibration->processes - 1.0;
    ss += cdf * calibration->spread * calibration->spread;
    df += cdf;
  }
  if (!own && !calibrated) {
    out.method = Method::kNone;
    out.change = stats::RelativeChange(out.baseline_median, out.candidate_median, higher);
    out.verdict = Verdict::kTooFewRuns;
    out.note = absl::StrCat(
        "median ", WithUnit(out.candidate_median, out.unit), " vs ",
        WithUnit(out.baseline_median, out.unit), ", ", SignedPercent(out.change), "; not judged: ",
        Processes(lc.size()), " vs ", Processes(lb.size()),
        " cannot show how far runs of this case move on their own (samples of one process share "
        "its luck). ",
        mode == Mode::kHistory
            ? "Run the baseline branch until it has 3 comparable runs, or calibrate this node "
              "(perfgate-agent calibrate)"
            : "Measure 3 or more processes a side (perfgate-agent ab, or several result files per "
              "side), or calibrate this node (perfgate-agent calibrate)");
    return false;
  }
  orient(stats::TShift(stats::Mean(lb), static_cast<unsigned>(lb.size()), stats::Mean(lc),
                       static_cast<unsigned>(lc.size()), std::sqrt(ss / df), df));
  out.method = calibrated ? Method::kCalibrated : Method::kHistory;
  if (calibrated) {
    e.calibration_source = calibration->source;
  }
  return true;
}

void Decide(Entry& e, Mode mode, double fdr) {
  MetricVerdict& out = e.verdict;
  const double tol = out.tolerance;
  // Without a test (summaries only, too few runs) the change alone decides,
  // as the policy's tolerance is then the only guard.
  const bool tested = out.method != Method::kNone && std::isfinite(out.p_adjusted);
  const bool significant = !tested || out.p_adjusted <= fdr;
  const double width = out.change_ci_high - out.change_ci_low;
  std::string basis;
  switch (out.method) {
    case Method::kBlocks:
      basis = absl::StrCat(out.blocks, " processes a side", e.paired ? ", paired by round" : "",
                           " (", out.candidate_samples, " vs ", out.baseline_samples, " samples)");
      break;
    case Method::kHistory:
      basis = mode == Mode::kHistory
                  ? absl::StrCat("against ", out.baseline_runs, " runs")
                  : absl::StrCat(out.blocks, " processes a side, t over their spread");
      break;
    case Method::kCalibrated:
      basis = absl::StrCat("against ", out.baseline_runs,
                           out.baseline_runs == 1 ? " run" : " runs",
                           ", run-to-run spread from the calibration of ", e.calibration_source);
      break;
    case Method::kNone:
      basis = absl::StrCat("against ", out.baseline_runs,
                           out.baseline_runs == 1 ? " run" : " runs", ", no test on this scale");
      break;
    case Method::kSamples:  // only stored reports carry it; this engine never tests so
      basis = absl::StrCat(out.candidate_samples, " vs ", out.baseline_samples, " samples");
      break;
  }
  std::string numbers =
      absl::StrCat("median ", WithUnit(out.candidate_median, out.unit), " vs ",
                   WithUnit(out.baseline_median, out.unit), ", ", SignedPercent(out.change));
  if (std::isfinite(width)) {
    absl::StrAppend(&numbers, " [", SignedPercent(out.change_ci_low), ", ",
                    SignedPercent(out.change_ci_high), "]");
  }
  if (tested) {
    absl::StrAppend(&numbers, ", p ", PValue(out.p_value), " (adjusted ", PValue(out.p_adjusted),
                    ")");
  }
  absl::StrAppend(&numbers, ", ", basis);

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
  } else {
    out.verdict = Verdict::kPass;
    out.note = absl::StrCat(numbers, "; within the tolerance of ", Percent(tol),
                            tested && out.change > tol ? " or not significant" : "");
  }
}

}  // namespace

std::vector<double> ProcessMedians(const MetricData& m) {
  if (!Usable(&m)) return {};
  size_t total = 0;
  for (unsigned n : m.block_sizes) total += n;
  std::vector<double> out;
  if (!m.block_sizes.empty() && total == m.samples.size() &&
      std::find(m.block_sizes.begin(), m.block_sizes.end(), 0u) == m.block_sizes.end()) {
    size_t at = 0;
    for (unsigned n : m.block_sizes) {
      out.push_back(stats::Median(std::span<const double>(m.samples.data() + at, n)));
      at += n;
    }
    return out;
  }
  if (m.blocks >= 2 && m.samples.size() >= m.blocks && m.samples.size() % m.blocks == 0) {
    const size_t size = m.samples.size() / m.blocks;
    for (size_t b = 0; b < m.blocks; ++b) {
      out.push_back(stats::Median(std::span<const double>(m.samples.data() + b * size, size)));
    }
    return out;
  }
  return {m.summary.median};
}

RunData RunDataFromCases(const std::string& run_id, const std::vector<CaseResult>& cases,
                         const std::map<std::string, CaseBlocks>& blocks) {
  struct Joined {
    const CaseResult* first = nullptr;
    CaseStatus status = CaseStatus::kUnspecified;
    std::string reason;
    std::vector<std::vector<double>> unthrottled;  // per metric
    std::vector<uint32_t> throttled;               // per metric
    std::vector<bool> throttled_in_order;          // every sample, in order
  };
  std::vector<std::string> order;
  std::map<std::string, Joined> joined;
  for (const CaseResult& c : cases) {
    const std::string key = c.benchmark.Key();
    auto [it, inserted] = joined.try_emplace(key);
    Joined& j = it->second;
    if (inserted) {
      order.push_back(key);
      j.first = &c;
      j.unthrottled.resize(c.metrics.size());
      j.throttled.resize(c.metrics.size());
    }
    if (c.status != CaseStatus::kUnspecified) {
      j.status = c.status;
      j.reason = c.reason;
    }
    for (const Sample& sample : c.samples) {
      j.throttled_in_order.push_back(sample.throttled);
      for (size_t m = 0; m < sample.values.size() && m < j.unthrottled.size(); ++m) {
        if (sample.throttled) {
          ++j.throttled[m];
        } else {
          j.unthrottled[m].push_back(sample.values[m]);
        }
      }
    }
  }

  RunData run;
  run.run_id = run_id;
  for (const std::string& key : order) {
    Joined& j = joined.at(key);
    // Unthrottled samples per process: the blocks the gate counts.
    std::vector<unsigned> sizes;
    bool rounds = false;
    if (auto it = blocks.find(key); it != blocks.end() && it->second.sizes.size() > 1) {
      size_t at = 0;
      for (unsigned n : it->second.sizes) {
        unsigned kept = 0;
        for (unsigned i = 0; i < n && at < j.throttled_in_order.size(); ++i, ++at) {
          if (!j.throttled_in_order[at]) ++kept;
        }
        sizes.push_back(kept);
      }
      rounds = it->second.rounds;
    }
    for (size_t m = 0; m < j.first->metrics.size(); ++m) {
      const MetricSpec& spec = j.first->metrics[m];
      const stats::Summary st = stats::Summarize(j.unthrottled[m]);
      MetricData d;
      MetricSummary& s = d.summary;
      s.benchmark = key;
      s.metric = spec.name;
      s.unit = spec.unit;
      s.direction = spec.direction;
      s.n = st.n;
      s.n_throttled = j.throttled[m];
      s.median = st.median;
      s.mean = st.mean;
      s.stdev = st.stdev;
      s.min = st.min;
      s.max = st.max;
      s.noise = st.noise;
      s.mad = st.mad;
      s.p5 = st.p5;
      s.p95 = st.p95;
      s.median_ci_low = st.median_ci_low;
      s.median_ci_high = st.median_ci_high;
      s.status = j.status;
      s.reason = j.reason;
      d.samples = std::move(j.unthrottled[m]);
      d.block_sizes = sizes;
      d.rounds = rounds;
      run.metrics.push_back(std::move(d));
    }
  }
  return run;
}

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

bool Fails(Verdict v) {
  return v == Verdict::kRegression || v == Verdict::kBelowFloor || v == Verdict::kMissing;
}

bool Inconclusive(Verdict v) {
  return v == Verdict::kTooNoisy || v == Verdict::kNoBaseline ||
         v == Verdict::kInvalidEnvironment || v == Verdict::kTooFewRuns;
}

bool Undecided(const MetricVerdict& v) {
  if (!v.gating) return false;
  if (v.verdict == Verdict::kTooNoisy || v.verdict == Verdict::kTooFewRuns) return true;
  return v.verdict == Verdict::kPass && std::isfinite(v.change) && v.change > v.tolerance;
}

GateResult EvaluateGate(const GateInput& input, const Policy& policy) {
  using MetricKey = std::pair<std::string, std::string>;
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
  GateResult result;
  result.mode = input.mode;
  result.invalid_reasons = input.candidate.invalid_reasons;
  for (const RunData& run : input.baselines) {
    for (const std::string& r : run.invalid_reasons) {
      result.invalid_reasons.push_back(absl::StrCat("baseline run ", run.run_id, ": ", r));
    }
    // One entry per run: a run that repeats a metric counts once.
    std::set<MetricKey> seen;
    for (const MetricData& m : run.metrics) {
      if (seen.insert({m.summary.benchmark, m.summary.metric}).second) {
        entry_for(m).baseline.push_back(&m);
      }
    }
  }

  // Statistics first, for every metric; the correction needs all p-values.
  std::vector<Entry*> tested;
  for (auto& [key, e] : entries) {
    e.rule = policy.Resolve(input.sku, e.verdict.benchmark, e.verdict.metric, input.mode);
    e.verdict.tolerance = e.rule.tolerance;
    e.verdict.gating = e.rule.gating;
    if (e.rule.floor) e.verdict.floor = *e.rule.floor;
    DecideWithoutStatistics(e, result.invalid_reasons);
    if (e.decided) continue;
    const auto cal = input.calibrations.find({e.verdict.benchmark, e.verdict.metric});
    if (!Test(e, input.mode, cal == input.calibrations.end() ? nullptr : &cal->second)) {
      e.decided = true;
      continue;
    }
    if (std::isfinite(e.verdict.p_value)) tested.push_back(&e);
  }
  std::vector<double> p;
  for (const Entry* e : tested) p.push_back(e->verdict.p_value);
  const std::vector<double> adjusted = stats::BenjaminiHochberg(p);
  for (size_t i = 0; i < tested.size(); ++i) tested[i]->verdict.p_adjusted = adjusted[i];

  for (auto& [key, e] : entries) {
    if (e.dropped) continue;
    if (!e.decided) Decide(e, input.mode, policy.fdr);
    result.verdicts.push_back(std::move(e.verdict));
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
      absl::StrCat(total, total == 1 ? " metric" : " metrics", " on ", input.sku, ", ",
                   ToString(input.mode), " gate");
  if (worst != nullptr) {
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
  return result;
}

}  // namespace perfgate::gate
