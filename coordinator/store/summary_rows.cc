#include "coordinator/store/summary_rows.h"

#include <map>

#include "common/json_number.h"

namespace perfgate::coordinator::store {

Json SummaryRow(int64_t metric_id, const stats::Summary& s, uint32_t throttled, Json process_medians) {
  // JSON has no NaN: statistics of an empty set are stored as NULL.
  auto num = [&](double x) { return s.n > 0 ? NumberOrNull(x) : Json(nullptr); };
  return {{"metric_id", metric_id},
          {"n", s.n},
          {"n_throttled", throttled},
          {"process_medians", std::move(process_medians)},
          {"median", num(s.median)},
          {"mean", num(s.mean)},
          {"stdev", num(s.stdev)},
          {"min", num(s.min)},
          {"max", num(s.max)},
          {"noise", num(s.noise)},
          {"mad", num(s.mad)},
          {"p5", num(s.p5)},
          {"p95", num(s.p95)},
          {"median_ci_low", num(s.median_ci_low)},
          {"median_ci_high", num(s.median_ci_high)}};
}

namespace {

// The values of every metric whose samples `cases` carry, by metric id.
std::map<int64_t, MetricValues> BatchValues(const std::vector<CaseResult>& cases, const std::vector<CaseIds>& ids) {
  std::map<int64_t, MetricValues> out;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    if (cases[ci].samples.empty()) continue;
    const std::vector<int64_t>& metric_ids = ids[ci].second;
    for (size_t mi = 0; mi < metric_ids.size(); ++mi) {
      MetricValues& m = out[metric_ids[mi]];
      m.values.reserve(m.values.size() + cases[ci].samples.size());
      for (const Sample& s : cases[ci].samples) {
        if (s.throttled) {
          ++m.throttled;
        } else {
          m.values.push_back(s.values[mi]);
        }
      }
    }
  }
  return out;
}

}  // namespace

Json BatchSummaryRows(const std::vector<CaseResult>& cases, const std::vector<CaseIds>& ids) {
  Json rows = Json::array();
  for (const auto& [metric_id, v] : BatchValues(cases, ids)) {
    rows.push_back(SummaryRow(metric_id, stats::Summarize(v.values), v.throttled));
  }
  return rows;
}

}  // namespace perfgate::coordinator::store
