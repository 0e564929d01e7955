// A metric's history: one run median per point, oldest first, and the level
// shifts found in it. The coordinator fills it from the store, the wire
// carries it (Query.History) and `perfgate history` renders it, so the one
// type lives here, below all three.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/run_types.h"

namespace perfgate {

/// One point of a metric's history: a run's median.
struct HistoryPoint {
  std::string run_id, commit, branch, node;
  TimePoint finished_at{};
  double median = 0;
  uint32_t n = 0;
};

/// The series of one metric, oldest first.
struct HistorySeries {
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  std::vector<HistoryPoint> points;
};

/// One level shift of a history series.
struct HistoryChange {
  size_t index = 0;          // first point of the new level
  double median_before = 0;  // median of the run medians since the previous change point
  double median_after = 0;   // median of the run medians up to the next change point
  double change = 0;         // relative change after vs before; > 0 is worse for the direction
  double statistic = 0;      // E-divisive energy statistic of the split
  double p_value = 1;        // its permutation p-value
};

/// A series with its level shifts, oldest first; every change's index is a
/// point of the series.
struct HistoryReport {
  HistorySeries series;
  std::vector<HistoryChange> changes;
};

}  // namespace perfgate
