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

/// Consecutive points of a series drawn as one: [first, end) of its points.
struct PointGroup {
  size_t first = 0, end = 0;
};

/// How a series of `points` points is drawn in about `max_points` (0: each
/// point alone): consecutive groups, every index in `breaks` (change points)
/// the first of a group, so that a level never shares a group with the one
/// before it; the points between two breaks are split into groups of equal
/// size (within one point), as many as their share of `max_points` (at
/// least one). A series of at most max_points points keeps a group per
/// point.
std::vector<PointGroup> GroupPoints(size_t points, const std::vector<size_t>& breaks, size_t max_points);

/// One group of a series as one point: its last run (run, commit, branch,
/// node, finish), the median of its valid runs' medians (of all its runs'
/// when none is valid), the lowest p5 and highest p95 of its valid runs, its
/// samples and throttled samples summed; invalid only when every run is,
/// with the first run's reasons.
SeriesPoint MergePoints(const Series& series, PointGroup group);

}  // namespace perfgate::coordinator
