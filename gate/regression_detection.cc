#include "gate/regression_detection.h"

#include <algorithm>
#include <cmath>

#include "gate/history_changes.h"

namespace perfgate::gate {

std::vector<DetectedChange> FindRegressions(const HistorySeries& valid, const ResolvedRule& rule) {
  const std::vector<HistoryPoint>& pts = valid.points;
  std::vector<DetectedChange> out;
  for (const HistoryChange& c : FindHistoryChanges(valid)) {
    if (!(c.change > rule.tolerance)) continue;
    if (rule.floor && std::abs(c.median_after - c.median_before) < *rule.floor) continue;
    DetectedChange d;
    d.change = c;
    d.bad_commit = pts[c.index].commit;
    d.first_bad_run_id = pts[c.index].run_id;
    d.good_commit = c.index > 0 ? pts[c.index - 1].commit : "";
    const size_t lo = c.index >= kSameChangeRuns ? c.index - kSameChangeRuns : 0;
    const size_t hi = std::min(pts.size() - 1, c.index + kSameChangeRuns);
    for (size_t i = lo; i <= hi; ++i) d.nearby_runs.push_back(pts[i].run_id);
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace perfgate::gate
