#include "gate/fleet.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "common/identity.h"
#include "common/stats.h"

namespace perfgate::gate {
namespace {

// The newest run of each node, in node order. Equal finish times are broken by
// run id so the choice does not depend on the input's order.
std::vector<const FleetRun*> NewestPerNode(const std::vector<FleetRun>& runs) {
  std::map<std::string, const FleetRun*> newest;
  for (const FleetRun& r : runs) {
    auto [it, inserted] = newest.emplace(r.node, &r);
    if (inserted) continue;
    const FleetRun& cur = *it->second;
    if (r.finished_at > cur.finished_at || (r.finished_at == cur.finished_at && r.run_id > cur.run_id)) {
      it->second = &r;
    }
  }
  std::vector<const FleetRun*> out;
  for (const auto& [node, run] : newest) out.push_back(run);
  return out;
}

// The value of each field held by more nodes than any other value; a field
// whose top count is shared has no majority and is left out. A node without
// the field counts as holding "".
std::map<std::string, std::string> MajorityFields(const std::vector<const FleetRun*>& nodes) {
  std::set<std::string> names;
  for (const FleetRun* r : nodes) {
    for (const auto& [k, v] : r->fields) names.insert(k);
  }
  std::map<std::string, std::string> majority;
  for (const std::string& name : names) {
    std::map<std::string, int> counts;
    for (const FleetRun* r : nodes) {
      auto it = r->fields.find(name);
      ++counts[it == r->fields.end() ? std::string() : it->second];
    }
    int best = 0;
    bool tied = false;
    std::string value;
    for (const auto& [v, n] : counts) {
      if (n > best) {
        best = n;
        value = v;
        tied = false;
      } else if (n == best) {
        tied = true;
      }
    }
    if (!tied) majority[name] = value;
  }
  return majority;
}

std::vector<FieldDifference> Differences(const FleetRun& run,
                                         const std::map<std::string, std::string>& majority) {
  std::vector<FieldDifference> out;
  for (const auto& [name, value] : majority) {
    auto it = run.fields.find(name);
    const std::string mine = it == run.fields.end() ? std::string() : it->second;
    if (mine != value) out.push_back({name, mine, value});
  }
  return out;
}

struct RunMetric {
  const FleetRun* run;
  const MetricSummary* summary;
};

}  // namespace

bool FleetReport::AnyWorse() const {
  return std::any_of(outliers.begin(), outliers.end(),
                     [](const FleetOutlier& o) { return o.side == FleetSide::kWorse; });
}

const char* ToString(FleetSide side) { return side == FleetSide::kWorse ? "worse" : "better"; }

FleetReport FindFleetOutliers(const std::vector<FleetRun>& runs, const FleetOptions& options) {
  FleetReport report;
  const std::vector<const FleetRun*> nodes = NewestPerNode(runs);
  report.nodes = static_cast<uint32_t>(nodes.size());
  report.k = options.k;
  const std::map<std::string, std::string> majority = MajorityFields(nodes);

  std::map<std::pair<std::string, std::string>, std::vector<RunMetric>> by_metric;
  for (const FleetRun* r : nodes) {
    for (const MetricSummary& s : r->summaries) {
      if (s.n == 0 || !std::isfinite(s.median)) continue;
      if (!options.benchmark_glob.empty() && !GlobMatch(options.benchmark_glob, s.benchmark)) continue;
      if (!options.metric.empty() && s.metric != options.metric) continue;
      by_metric[{s.benchmark, s.metric}].push_back({r, &s});
    }
  }

  std::map<std::string, FleetNode> per_node;
  for (const FleetRun* r : nodes) per_node[r->node] = {r->node, r->run_id, 0, 0};

  for (const auto& [key, entries] : by_metric) {
    if (entries.size() < kMinFleetNodes) continue;
    std::vector<double> medians;
    for (const RunMetric& e : entries) medians.push_back(e.summary->median);
    const double fleet_median = stats::Median(medians);
    const double mad = std::max(stats::Mad(medians), kFleetMadFloor * std::abs(fleet_median));
    if (!(mad > 0)) continue;  // every node measured exactly 0: nothing to tell apart
    for (const RunMetric& e : entries) {
      const MetricSummary& s = *e.summary;
      const double sign = s.direction == Direction::kLowerIsBetter ? 1.0 : -1.0;
      const double deviation = sign * (s.median - fleet_median) / mad;
      if (!(std::abs(deviation) > options.k)) continue;
      FleetOutlier o;
      o.node = e.run->node;
      o.run_id = e.run->run_id;
      o.benchmark = s.benchmark;
      o.metric = s.metric;
      o.unit = s.unit;
      o.direction = s.direction;
      o.node_median = s.median;
      o.fleet_median = fleet_median;
      o.mad = mad;
      o.deviation = deviation;
      o.side = deviation > 0 ? FleetSide::kWorse : FleetSide::kBetter;
      o.nodes = static_cast<uint32_t>(entries.size());
      o.differing_fields = Differences(*e.run, majority);
      FleetNode& n = per_node[o.node];
      ++(o.side == FleetSide::kWorse ? n.worse : n.better);
      report.outliers.push_back(std::move(o));
    }
  }
  std::stable_sort(report.outliers.begin(), report.outliers.end(),
                   [](const FleetOutlier& a, const FleetOutlier& b) {
                     if (a.benchmark != b.benchmark) return a.benchmark < b.benchmark;
                     if (a.metric != b.metric) return a.metric < b.metric;
                     return a.deviation > b.deviation;
                   });
  for (auto& [name, n] : per_node) report.node_summary.push_back(n);
  std::stable_sort(report.node_summary.begin(), report.node_summary.end(),
                   [](const FleetNode& a, const FleetNode& b) { return a.worse > b.worse; });
  return report;
}

}  // namespace perfgate::gate
