#include "coordinator/domain/series.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/stats.h"

namespace perfgate::coordinator {

ValidHistory ValidPoints(const Series& series) {
  ValidHistory out;
  out.history.unit = series.unit;
  out.history.direction = series.direction;
  for (size_t i = 0; i < series.points.size(); ++i) {
    if (!series.points[i].valid()) continue;
    out.history.points.push_back(series.points[i].point);
    out.source_index.push_back(i);
  }
  return out;
}

std::vector<PointGroup> GroupPoints(size_t points, const std::vector<size_t>& breaks, size_t max_points) {
  std::vector<PointGroup> out;
  std::vector<size_t> bounds{0};
  for (size_t b : breaks) {
    if (b > bounds.back() && b < points) bounds.push_back(b);
  }
  bounds.push_back(points);
  const bool each = max_points == 0 || points <= max_points;
  for (size_t s = 0; s + 1 < bounds.size(); ++s) {
    const size_t len = bounds[s + 1] - bounds[s];
    const size_t groups = each ? len : std::max<size_t>(1, len * max_points / points);
    for (size_t k = 0; k < groups; ++k) {
      out.push_back({bounds[s] + k * len / groups, bounds[s] + (k + 1) * len / groups});
    }
  }
  return out;
}

SeriesPoint MergePoints(const Series& series, PointGroup group) {
  SeriesPoint out = series.points[group.end - 1];
  if (group.end - group.first == 1) return out;
  std::vector<double> medians, all;
  double p5 = std::numeric_limits<double>::infinity(), p95 = -p5;
  out.point.n = 0;
  out.n_throttled = 0;
  for (size_t i = group.first; i < group.end; ++i) {
    const SeriesPoint& p = series.points[i];
    out.point.n += p.point.n;
    out.n_throttled += p.n_throttled;
    all.push_back(p.point.median);
    if (!p.valid()) continue;
    medians.push_back(p.point.median);
    if (std::isfinite(p.p5)) p5 = std::min(p5, p.p5);
    if (std::isfinite(p.p95)) p95 = std::max(p95, p.p95);
  }
  out.point.median = stats::Median(medians.empty() ? all : medians);
  out.p5 = std::isfinite(p5) ? p5 : std::nan("");
  out.p95 = std::isfinite(p95) ? p95 : std::nan("");
  out.invalid_reasons = medians.empty() ? series.points[group.first].invalid_reasons : std::vector<std::string>{};
  return out;
}

}  // namespace perfgate::coordinator
