// The decisions of `perfgate bisect` (bisect.h): a probe's verdict and the
// next step from the probes stored so far.
#include "cli/bisect.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace perfgate::cli {
namespace {

// Where one commit stands after its probes.
enum class Status { kUnmeasured, kPending, kCarries, kClean, kInconclusive };

struct CommitState {
  Status status = Status::kUnmeasured;
  unsigned attempts = 0;
  ProbeMeasurement last;  // the measurement of the last attempt
};

CommitState StateOf(const std::string& commit, const std::vector<Probe>& probes, double threshold,
                    unsigned max_attempts) {
  CommitState s;
  for (const Probe& p : probes) {
    if (p.commit != commit || p.attempt < s.attempts) continue;
    s.attempts = p.attempt;
    s.last = p.measurement;
  }
  if (s.attempts == 0) return s;
  switch (Judge(s.last, threshold)) {
    case ProbeVerdict::kCarries: s.status = Status::kCarries; break;
    case ProbeVerdict::kClean: s.status = Status::kClean; break;
    case ProbeVerdict::kFailed: s.status = Status::kInconclusive; break;
    case ProbeVerdict::kUndecided:
      s.status = s.attempts < max_attempts ? Status::kPending : Status::kInconclusive;
      break;
  }
  return s;
}

// The first step: the bad endpoint, measured until it carries or not.
bool EndpointStep(const BisectPlan& plan, const std::vector<Probe>& probes, BisectStep* step) {
  const std::string& bad = plan.commits.back();
  const CommitState s = StateOf(bad, probes, plan.endpoint_threshold, plan.max_attempts);
  step->threshold = plan.endpoint_threshold;
  if (s.status == Status::kUnmeasured || s.status == Status::kPending) {
    step->kind = BisectStep::Kind::kMeasure;
    step->commits = {bad};
    step->attempts = {s.attempts + 1};
    return true;
  }
  if (s.status == Status::kCarries) {
    step->regression_size = s.last.change;
    return false;
  }
  step->kind = BisectStep::Kind::kNoCulprit;
  const std::string limit = absl::StrFormat("%.1f %%", 100 * plan.endpoint_threshold);
  if (s.status == Status::kClean) {
    step->summary = absl::StrCat("no culprit: the bad commit ", ShortId(bad), " measures ", DescribeChange(s.last),
                                 " against the good one, below the ", limit, " worth bisecting");
  } else {
    step->summary = absl::StrCat("no culprit: the bad commit ", ShortId(bad), " could not be told apart from the good "
                                 "one after ", s.attempts, " measurement(s) (",
                                 s.last.ok ? DescribeChange(s.last) : s.last.note, "); no commit is named");
  }
  return true;
}

// Up to `k` unmeasured indices in (lo, hi), nearest the points that split
// the range evenly; the lower one on a tie.
std::vector<int> Pick(const std::vector<CommitState>& states, int lo, int hi, unsigned k) {
  std::vector<int> picked;
  for (unsigned j = 1; j <= k; ++j) {
    const double target = lo + (hi - lo) * static_cast<double>(j) / (k + 1);
    int best = -1;
    for (int i = lo + 1; i < hi; ++i) {
      if (states[i].status != Status::kUnmeasured) continue;
      if (std::find(picked.begin(), picked.end(), i) != picked.end()) continue;
      if (best < 0 || std::abs(i - target) < std::abs(best - target)) best = i;
    }
    if (best >= 0) picked.push_back(best);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

}  // namespace

ProbeVerdict Judge(const ProbeMeasurement& m, double threshold) {
  if (!m.ok || !std::isfinite(m.change)) return ProbeVerdict::kFailed;
  // Either side of the threshold only when the whole interval is: a change
  // above it whose interval reaches below it could be a clean commit's
  // noise, as one whose interval reaches above it could carry.
  if (std::isfinite(m.ci_low) && m.ci_low > threshold) return ProbeVerdict::kCarries;
  if (std::isfinite(m.ci_high) && m.ci_high < threshold) return ProbeVerdict::kClean;
  return ProbeVerdict::kUndecided;
}

std::string DescribeChange(const ProbeMeasurement& m) {
  return absl::StrFormat("%+.1f %% [%+.1f, %+.1f]", 100 * m.change, 100 * m.ci_low, 100 * m.ci_high);
}

namespace {

// The search of `commits` after `good`, the last of which carries: the
// first that carries right after one that is clean, what to measure to
// find it, or the range where only undecided commits are left.
// step->threshold judges the commits between.
void Search(const BisectPlan& plan, const std::vector<std::string>& commits, const std::vector<Probe>& probes,
            BisectStep* out) {
  BisectStep& step = *out;
  // Index 0 is good, i is commits[i - 1]; the last carries.
  const int n = static_cast<int>(commits.size());
  std::vector<CommitState> states(n + 1);
  states[0].status = Status::kClean;
  for (int i = 1; i < n; ++i) states[i] = StateOf(commits[i - 1], probes, step.threshold, plan.max_attempts);
  states[n] = StateOf(commits.back(), probes, plan.endpoint_threshold, plan.max_attempts);
  int hi = n;
  for (int i = 1; i < n; ++i) {
    if (states[i].status == Status::kCarries) {
      hi = i;
      break;
    }
  }
  int lo = 0;
  for (int i = hi - 1; i > 0; --i) {
    if (states[i].status == Status::kClean) {
      lo = i;
      break;
    }
  }
  const auto name = [&](int i) { return i == 0 ? plan.good : commits[i - 1]; };
  if (hi == lo + 1) {
    step.kind = BisectStep::Kind::kCulprit;
    step.culprit = name(hi);
    step.culprit_measurement = states[hi].last;
    step.summary = absl::StrCat("culprit ", ShortId(step.culprit), ": it measures ", DescribeChange(states[hi].last),
                                " against good, and ", ShortId(name(lo)), " before it ",
                                lo == 0 ? std::string("is the good endpoint")
                                        : absl::StrCat("is clean at ", DescribeChange(states[lo].last)));
    return;
  }
  for (int i = lo + 1; i < hi; ++i) {
    if (states[i].status != Status::kPending) continue;
    step.commits.push_back(name(i));
    step.attempts.push_back(states[i].attempts + 1);
  }
  if (!step.commits.empty()) return;
  for (int i : Pick(states, lo, hi, std::max(1u, plan.probes_per_round))) {
    step.commits.push_back(name(i));
    step.attempts.push_back(1);
  }
  if (!step.commits.empty()) return;
  step.kind = BisectStep::Kind::kRange;
  step.range_good = name(lo);
  step.range_bad = name(hi);
  std::vector<std::string> undecided;
  for (int i = lo + 1; i < hi; ++i) {
    undecided.push_back(absl::StrCat(ShortId(name(i)), " (", states[i].last.ok ? DescribeChange(states[i].last)
                                                                              : states[i].last.note, ")"));
  }
  step.summary = absl::StrCat("no single culprit: the change came after ", ShortId(step.range_good), " and by ",
                              ShortId(step.range_bad), "; the commits between could not be decided: ",
                              absl::StrJoin(undecided, ", "));
}

}  // namespace

std::string ShortId(const std::string& id) {
  const size_t at = id.find("@sha256:");
  if (at == std::string::npos) return id.substr(0, 12);
  return id.substr(0, at + 8 + 12);
}

BisectStep NextStep(const BisectPlan& plan, const std::vector<Probe>& probes) {
  BisectStep step;
  if (plan.commits.empty()) {
    step.kind = BisectStep::Kind::kNoCulprit;
    step.summary = "no culprit: there is no commit between good and bad";
    return step;
  }
  if (EndpointStep(plan, probes, &step)) return step;
  step.threshold = step.regression_size / 2;
  Search(plan, plan.commits, probes, &step);
  const auto inside = plan.merge_insides.find(step.culprit);
  if (step.kind != BisectStep::Kind::kCulprit || inside == plan.merge_insides.end() || inside->second.empty()) {
    return step;
  }
  // The merge carries: which of the commits it brought in, or the merge itself.
  BisectStep in;
  in.threshold = step.threshold;
  in.regression_size = step.regression_size;
  in.merge = step.culprit;
  std::vector<std::string> commits = inside->second;
  commits.push_back(in.merge);
  Search(plan, commits, probes, &in);
  in.summary = absl::StrCat("inside merge ", ShortId(in.merge), ": ", in.summary);
  if (in.kind == BisectStep::Kind::kCulprit && in.culprit == in.merge) {
    in.summary += "; none of the commits it brought in carries the change alone";
  }
  return in;
}

}  // namespace perfgate::cli
