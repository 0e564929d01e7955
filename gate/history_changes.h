// Change points of a metric's history: where the level of its run medians
// shifted, and by how much, so that a regression can be traced to the commit
// that introduced it (docs/statistics.md). Domain code: no database, no wire.
#pragma once

#include <cstddef>
#include <vector>

#include "common/history.h"

namespace perfgate::gate {

/// Smallest segment E-divisive may split off: a level needs this many runs.
inline constexpr size_t kChangePointMinSize = 3;

/// The longest series searched point by point. E-divisive's permutation test
/// costs O(n log n) per permutation: on a 2-core VM about 15 ms at 500
/// points, 30 ms at 1 000 and 0.8 s at 10 000 (a series with two shifts),
/// so a longer series is searched in two steps.
inline constexpr size_t kChangeSearchPoints = 500;

/// The level shifts of the series' run medians (EDivisive with its
/// defaults), oldest first; none when the series has fewer than
/// 2 × kChangePointMinSize points. A series longer than kChangeSearchPoints
/// is searched coarse to fine: E-divisive over the medians of consecutive
/// groups of runs (at most kChangeSearchPoints groups), then each change
/// found placed at its run by the best split of the two groups around it.
/// A level that lasts less than about two groups is then not found; a
/// shorter range of the series (from, to) is searched run by run.
std::vector<HistoryChange> FindHistoryChanges(const HistorySeries& series);

}  // namespace perfgate::gate
