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

/// The level shifts of the series' run medians (EDivisive with its
/// defaults), oldest first; none when the series has fewer than
/// 2 × kChangePointMinSize points.
std::vector<HistoryChange> FindHistoryChanges(const HistorySeries& series);

}  // namespace perfgate::gate
