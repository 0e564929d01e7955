#include "gate/history_changes.h"

#include <algorithm>
#include <span>

#include "gate/changepoint.h"
#include "gate/inference.h"
#include "common/stats.h"

namespace perfgate::gate {

namespace {

// E-divisive over the medians of groups of `group` consecutive values, each
// change then moved to the run where the best split of the two groups
// around it (bounded by its neighbours) puts it.
std::vector<ChangePoint> CoarseToFine(std::span<const double> values, size_t group) {
  std::vector<double> coarse;
  for (size_t at = 0; at < values.size(); at += group) {
    coarse.push_back(stats::Median(values.subspan(at, std::min(group, values.size() - at))));
  }
  const size_t min_groups = std::max<size_t>(2, (kChangePointMinSize + group - 1) / group);
  std::vector<ChangePoint> found = EDivisive(coarse, 0.05, 199, min_groups);
  size_t floor = 0;  // a change stays after the one before it
  for (size_t i = 0; i < found.size(); ++i) {
    const size_t k = found[i].index;
    const size_t next = i + 1 < found.size() ? found[i + 1].index * group : values.size();
    const size_t lo = std::max(floor, (k - 1) * group);
    const size_t hi = std::min({next, (k + 1) * group, values.size()});
    const size_t split = hi > lo + 1 ? BestSplitIndex(values.subspan(lo, hi - lo)) : 0;
    found[i].index = split > 0 ? lo + split : k * group;
    floor = found[i].index + 1;
  }
  return found;
}

}  // namespace

std::vector<HistoryChange> FindHistoryChanges(const HistorySeries& series) {
  std::vector<HistoryChange> out;
  if (series.points.size() < 2 * kChangePointMinSize) return out;
  std::vector<double> medians;
  medians.reserve(series.points.size());
  for (const HistoryPoint& p : series.points) medians.push_back(p.median);
  const size_t group = (medians.size() + kChangeSearchPoints - 1) / kChangeSearchPoints;
  const std::vector<gate::ChangePoint> found = group <= 1
      ? gate::EDivisive(medians, 0.05, 199, kChangePointMinSize)
      : CoarseToFine(medians, group);
  const std::span<const double> all(medians);
  for (size_t i = 0; i < found.size(); ++i) {
    // Each level runs from one change point to the next, so a shift is measured
    // between the two levels it separates, not against the whole series.
    const size_t begin = i == 0 ? 0 : found[i - 1].index;
    const size_t end = i + 1 < found.size() ? found[i + 1].index : medians.size();
    HistoryChange c;
    c.index = found[i].index;
    c.median_before = stats::Median(all.subspan(begin, c.index - begin));
    c.median_after = stats::Median(all.subspan(c.index, end - c.index));
    c.change = gate::RelativeChange(c.median_before, c.median_after,
                                     series.direction == Direction::kHigherIsBetter);
    c.statistic = found[i].statistic;
    c.p_value = found[i].p_value;
    out.push_back(c);
  }
  return out;
}

}  // namespace perfgate::gate
