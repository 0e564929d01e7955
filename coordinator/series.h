// One series as the dashboard and the regression detector read it: the run
// medians of one metric of one case over the complete runs of a SKU (and a
// branch, a node), each with the run's p5–p95 band, its throttled samples and
// the reasons it is invalid for gating. History (history.h) sees the medians
// only; this adds what a plot shows and what detection must leave out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/history.h"
#include "coordinator/store.h"

namespace perfgate::coordinator {

/// Which series; empty sku/branch/node match all.
struct SeriesQuery {
  std::string benchmark;  // BenchmarkId::Key()
  std::string metric;
  std::string sku, branch, node;
  uint32_t limit = 200;   // the newest points, at most kMaxSeriesPoints
};

inline constexpr uint32_t kMaxSeriesPoints = 5000;

/// One run of the series.
struct SeriesPoint {
  HistoryPoint point;      // run, commit, branch, node, finished_at, median, n
  double p5 = 0, p95 = 0;  // NaN for runs closed before p5/p95 were stored
  uint32_t n_throttled = 0;
  std::vector<std::string> invalid_reasons;  // empty: valid for gating
  bool valid() const { return invalid_reasons.empty(); }
};

struct Series {
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  std::vector<SeriesPoint> points;  // oldest first
};

/// The newest q.limit points, oldest first. NOT_FOUND when nothing was ever
/// stored for the benchmark and metric; INVALID_ARGUMENT for an empty
/// benchmark or metric or a limit above kMaxSeriesPoints.
absl::StatusOr<Series> GetSeries(Store& store, const SeriesQuery& q);

/// The valid points of a series as a history (what change points are found
/// in), with the index in `series.points` of each.
struct ValidHistory {
  HistorySeries history;
  std::vector<size_t> source_index;
};
ValidHistory ValidPoints(const Series& series);

}  // namespace perfgate::coordinator
