// The valid points of a series (store/history.h: the run medians of one
// metric of one case with each run's band, throttled samples and reasons it
// is invalid for gating), as the change-point search takes them: what a plot
// shows and what detection must leave out.
#pragma once

#include <cstddef>
#include <vector>

#include "common/history.h"
#include "coordinator/store/history.h"

namespace perfgate::coordinator {

using store::Series;
using store::SeriesPoint;
using store::SeriesQuery;

/// The valid points of a series as a history (what change points are found
/// in), with the index in `series.points` of each.
struct ValidHistory {
  HistorySeries history;
  std::vector<size_t> source_index;
};
ValidHistory ValidPoints(const Series& series);

}  // namespace perfgate::coordinator
