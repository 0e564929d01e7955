#include "gate/history_changes.h"

#include <span>

#include "gate/changepoint.h"
#include "gate/inference.h"
#include "common/stats.h"

namespace perfgate::gate {

std::vector<HistoryChange> FindHistoryChanges(const HistorySeries& series) {
  std::vector<HistoryChange> out;
  if (series.points.size() < 2 * kChangePointMinSize) return out;
  std::vector<double> medians;
  medians.reserve(series.points.size());
  for (const HistoryPoint& p : series.points) medians.push_back(p.median);
  const std::vector<gate::ChangePoint> found =
      gate::EDivisive(medians, 0.05, 199, kChangePointMinSize);
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
