// The decisions of `perfgate bisect` (docs/bisect.md), apart from how a
// probe is built and measured: what one measurement of a commit against the
// good endpoint says, and, from every probe measured so far, what to
// measure next or how the bisection ends. The next step is computed from
// the stored probes alone, so a bisection that was interrupted resumes
// where it stood.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/bisection_state.h"

namespace perfgate::cli {

/// What one interleaved A/B of a commit against the good endpoint said
/// about the case judged; change > 0 is worse, the interval is 95 %.
struct ProbeMeasurement {
  bool ok = false;  // false: the probe could not be measured (note says why)
  double change = 0, ci_low = 0, ci_high = 0, p_value = 1;
  unsigned rounds = 0;
  std::string benchmark, metric;
  std::string note;
};

/// Carries the change when the shift's interval lies above `threshold`;
/// clean when it lies below; undecided when it reaches both sides (more
/// rounds may tell); failed when it was not measured.
ProbeVerdict Judge(const ProbeMeasurement& m, double threshold);

/// One stored measurement of one commit.
struct Probe {
  std::string commit;
  unsigned attempt = 1;  // 1, then 2, ... while undecided
  ProbeMeasurement measurement;
};

/// The commits to bisect and how probes are judged.
struct BisectPlan {
  std::string good;                  // measured at the old level by definition
  std::vector<std::string> commits;  // the first-parent commits after good, oldest first; the last is bad
  /// The bad endpoint carries the change when it is at least this (the
  /// smallest change worth bisecting, or half a stored regression's size).
  double endpoint_threshold = 0.05;
  unsigned max_attempts = 3;     // measurements of one commit before it is inconclusive
  unsigned probes_per_round = 1;  // commits measured in one round (a Slurm array)
  /// Merge commits of `commits` and the commits each brought in (`git
  /// rev-list --first-parent --reverse M^1..M^2`), oldest first: when the
  /// search names such a merge, the commits inside it are searched next,
  /// each measured against good as before.
  std::map<std::string, std::vector<std::string>> merge_insides;
};

/// What to do next.
struct BisectStep {
  enum class Kind { kMeasure, kCulprit, kNoCulprit, kRange } kind = Kind::kMeasure;
  /// kMeasure: the commits to measure this round and the attempt each is at.
  std::vector<std::string> commits;
  std::vector<unsigned> attempts;
  /// Each measured commit carries when its change reaches this (half the
  /// regression's size once the bad endpoint is measured; else the
  /// endpoint's threshold).
  double threshold = 0;
  double regression_size = 0;  // the bad endpoint's change, once it carries
  /// kCulprit: the first commit that carries, right after one that is clean.
  std::string culprit;
  ProbeMeasurement culprit_measurement;
  /// kRange: the last clean and the first carrying commit, with commits
  /// between that could not be decided.
  std::string range_good, range_bad;
  /// Set when the step is inside this merge commit (merge_insides): the
  /// culprit is a commit it brought in, or the merge itself when none of
  /// them carries.
  std::string merge;
  std::string summary;  // one sentence for people: what was found and why
};

/// The next step, from the plan and every probe so far (any order; the
/// last attempt of a commit counts). The bad endpoint is measured first;
/// if it does not carry, there is no culprit. Then the commits between the
/// last clean and the first carrying commit are searched, nearest the
/// middle first; a commit still undecided after max_attempts (or failing)
/// is never guessed: the commits next to it are measured instead, and when
/// only such commits are left the step names the range. A culprit merge
/// of plan.merge_insides is searched into in the same way, from good to
/// the merge, with the threshold of the first-parent search.
BisectStep NextStep(const BisectPlan& plan, const std::vector<Probe>& probes);

/// A commit's first 12 characters; an image `name@sha256:<hex>` keeps its
/// name and the digest's first 12 hex digits.
std::string ShortId(const std::string& id);

/// "+15.1 % [12.0, 18.3]": a change with its interval, in percent.
std::string DescribeChange(const ProbeMeasurement& m);

}  // namespace perfgate::cli
