// Change points of a metric's history: where the level of its run medians
// shifted, and by how much, so that a regression can be traced to the commit
// that introduced it (docs/statistics.md). Domain code: no database, no wire.
#pragma once

#include <cstddef>
#include <vector>

#include "coordinator/store.h"

namespace perfgate::coordinator {

/// One level shift of a history series.
struct HistoryChange {
  size_t index = 0;          // first point of the new level
  double median_before = 0;  // median of the run medians since the previous change point
  double median_after = 0;   // median of the run medians up to the next change point
  double change = 0;         // relative change after vs before; > 0 is worse for the direction
  double statistic = 0;      // E-divisive energy statistic of the split
  double p_value = 1;        // its permutation p-value
};

/// Smallest segment E-divisive may split off: a level needs this many runs.
inline constexpr size_t kChangePointMinSize = 3;

/// The level shifts of the series' run medians (stats::EDivisive with its
/// defaults), oldest first; none when the series has fewer than
/// 2 × kChangePointMinSize points.
std::vector<HistoryChange> FindHistoryChanges(const HistorySeries& series);

}  // namespace perfgate::coordinator
