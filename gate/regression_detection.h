// Which level shifts of a tracked branch's history are regressions to store
// (docs/dashboard.md): the change points of the valid run medians
// (FindHistoryChanges) that are worse than the rule's tolerance and, where
// the rule has one, larger than its absolute floor, each with the commits on
// both sides and the runs near it. Domain code: the coordinator's regression
// repository feeds it a series and stores what it returns.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/history.h"
#include "gate/policy.h"

namespace perfgate::gate {

/// A change found within this many runs of a stored one's first bad run, in
/// the same series, is that stored change seen again.
inline constexpr size_t kSameChangeRuns = 3;

/// A shift detection would store: the change, the last good and first bad
/// commit, the first bad run, and the runs within kSameChangeRuns of it.
struct DetectedChange {
  HistoryChange change;
  std::string good_commit, bad_commit, first_bad_run_id;
  std::vector<std::string> nearby_runs;
};

/// The regressions in `valid` (valid points only, oldest first) under `rule`.
std::vector<DetectedChange> FindRegressions(const HistorySeries& valid, const ResolvedRule& rule);

}  // namespace perfgate::gate
