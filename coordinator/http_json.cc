#include "coordinator/http_json.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/json_number.h"
#include "common/stats.h"
#include "coordinator/regression_messages.h"
#include "gate/history_changes.h"
#include "gate/inference.h"
#include "wire/api_json.h"

namespace perfgate::coordinator {
namespace {

using Json = nlohmann::json;

Json Seconds(TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}


}  // namespace

Json ToJson(const RunRecord& r) {
  const RunMeta& m = r.meta;
  Json j = {{"id", m.run_id},        {"agent", m.agent_name},
            {"sku", m.environment.sku}, {"repo", m.repo},
            {"branch", m.branch},    {"commit", m.commit},
            {"trigger", ToString(m.trigger)}, {"ci_job", m.ci_job},
            {"node", m.node},        {"started_at", Seconds(m.started_at)},
            {"status", ToString(r.status)}, {"samples", r.samples},
            {"failure_reason", r.failure_reason}, {"invalid_reasons", r.invalid_reasons},
            {"details", m.details}};
  j["finished_at"] = r.finished_at ? Seconds(*r.finished_at) : Json(nullptr);
  return j;
}

Json ToJson(const MetricSummary& s) {
  return {{"benchmark", s.benchmark}, {"metric", s.metric},   {"unit", s.unit},
          {"direction", ToString(s.direction)}, {"n", s.n},    {"n_throttled", s.n_throttled},
          {"median", NumberOrNull(s.median)}, {"mean", NumberOrNull(s.mean)}, {"stdev", NumberOrNull(s.stdev)},
          {"min", NumberOrNull(s.min)},     {"max", NumberOrNull(s.max)},   {"noise", NumberOrNull(s.noise)},
          {"mad", NumberOrNull(s.mad)},     {"p5", NumberOrNull(s.p5)},     {"p95", NumberOrNull(s.p95)},
          {"median_ci_low", NumberOrNull(s.median_ci_low)}, {"median_ci_high", NumberOrNull(s.median_ci_high)},
          {"status", ToString(s.status)}, {"reason", s.reason}};
}

Json ToJson(const Verdict& v) {
  return {{"report_id", v.report_id}, {"outcome", v.outcome}, {"baseline_branch", v.baseline_branch},
          {"created_at", Seconds(v.created_at)}};
}

Json ToJson(const Catalog& c) {
  Json metrics = Json::array();
  for (const Catalog::Metric& m : c.metrics) {
    metrics.push_back({{"benchmark", m.benchmark}, {"metric", m.metric}, {"unit", m.unit}});
  }
  return {{"metrics", metrics}, {"skus", c.skus}, {"branches", c.branches}, {"nodes", c.nodes}};
}

Json ToJson(const Sweep& s) {
  return {{"sweep", s.sweep}, {"sku", s.sku}, {"runs", s.runs}, {"nodes", s.nodes},
          {"finished_at", Seconds(s.finished_at)}};
}

Json ToJson(const gate::FleetReport& report) {
  Json outliers = Json::array();
  for (const gate::FleetOutlier& o : report.outliers) {
    Json fields = Json::array();
    for (const gate::FieldDifference& f : o.differing_fields) {
      fields.push_back({{"name", f.name}, {"node_value", f.node_value}, {"majority_value", f.majority_value}});
    }
    outliers.push_back({{"node", o.node}, {"run_id", o.run_id}, {"benchmark", o.benchmark},
                        {"metric", o.metric}, {"unit", o.unit}, {"direction", ToString(o.direction)},
                        {"node_median", NumberOrNull(o.node_median)}, {"fleet_median", NumberOrNull(o.fleet_median)},
                        {"mad", NumberOrNull(o.mad)}, {"deviation", NumberOrNull(o.deviation)},
                        {"side", gate::ToString(o.side)}, {"nodes", o.nodes},
                        {"differing_fields", fields}});
  }
  Json nodes = Json::array();
  for (const gate::FleetNode& n : report.node_summary) {
    nodes.push_back({{"node", n.node}, {"run_id", n.run_id}, {"worse", n.worse}, {"better", n.better}});
  }
  return {{"nodes", report.nodes}, {"k", report.k}, {"outliers", outliers}, {"node_summary", nodes}};
}

Json SeriesJson(const Series& series, const std::vector<Regression>& regressions, size_t max_points) {
  const ValidHistory valid = ValidPoints(series);
  const std::vector<HistoryChange> found = gate::FindHistoryChanges(valid.history);
  std::vector<size_t> breaks;
  for (const HistoryChange& c : found) breaks.push_back(valid.source_index[c.index]);
  const std::vector<PointGroup> groups = GroupPoints(series.points.size(), breaks, max_points);
  Json points = Json::array();
  for (const PointGroup& g : groups) {
    const SeriesPoint p = MergePoints(series, g);
    const HistoryPoint& first = series.points[g.first].point;
    points.push_back({{"run_id", p.point.run_id}, {"commit", p.point.commit},
                      {"branch", p.point.branch}, {"node", p.point.node},
                      {"t", Seconds(p.point.finished_at)}, {"median", NumberOrNull(p.point.median)},
                      {"p5", NumberOrNull(p.p5)}, {"p95", NumberOrNull(p.p95)}, {"n", p.point.n},
                      {"n_throttled", p.n_throttled}, {"invalid_reasons", p.invalid_reasons},
                      {"runs", g.end - g.first}, {"first_commit", first.commit},
                      {"t_first", Seconds(first.finished_at)}});
  }
  Json changes = Json::array();
  for (const HistoryChange& c : found) {
    const size_t at = valid.source_index[c.index];
    // The group whose first run is the change's.
    const auto group = std::partition_point(groups.begin(), groups.end(),
                                            [&](const PointGroup& g) { return g.end <= at; });
    changes.push_back({{"index", group - groups.begin()}, {"commit", series.points[at].point.commit},
                       {"run_id", series.points[at].point.run_id},
                       {"median_before", NumberOrNull(c.median_before)},
                       {"median_after", NumberOrNull(c.median_after)}, {"change", NumberOrNull(c.change)},
                       {"p_value", NumberOrNull(c.p_value)}});
  }
  Json regs = Json::array();
  // The regressions as the regression routes answer them (one dialect).
  for (const Regression& r : regressions) regs.push_back(Json::parse(wire::ToApiJson(ToMessage(r))));
  return {{"unit", series.unit}, {"direction", ToString(series.direction)}, {"runs", series.points.size()},
          {"points", points}, {"changes", changes}, {"regressions", regs}};
}

namespace {

// The 95 % interval as [low, high].
Json Interval(double low, double high) { return Json::array({NumberOrNull(low), NumberOrNull(high)}); }

}  // namespace

Json CompareJson(const RunRecord& base, const std::vector<MetricSummary>& base_sums,
                 const RunRecord& cand, const std::vector<MetricSummary>& cand_sums,
                 const std::vector<gate::MetricVerdict>& changes) {
  std::map<std::pair<std::string, std::string>, const MetricSummary*> by_key;
  for (const MetricSummary& s : base_sums) by_key[{s.benchmark, s.metric}] = &s;
  std::map<std::pair<std::string, std::string>, const gate::MetricVerdict*> judged;
  for (const gate::MetricVerdict& v : changes) judged[{v.benchmark, v.metric}] = &v;
  std::vector<Json> rows;
  for (const MetricSummary& c : cand_sums) {
    auto it = by_key.find({c.benchmark, c.metric});
    auto v = judged.find({c.benchmark, c.metric});
    if (it == by_key.end() || v == judged.end()) continue;
    const MetricSummary& b = *it->second;
    const gate::MetricVerdict& g = *v->second;
    // Not estimated (a side all throttled): the change of the medians.
    const bool estimated = std::isfinite(g.change);
    const double change = estimated ? g.change
                                    : gate::RelativeChange(b.median, c.median, c.direction == Direction::kHigherIsBetter);
    rows.push_back({{"benchmark", c.benchmark}, {"metric", c.metric}, {"unit", c.unit},
                    {"direction", ToString(c.direction)}, {"base_median", NumberOrNull(b.median)},
                    {"cand_median", NumberOrNull(c.median)}, {"base_p5", NumberOrNull(b.p5)},
                    {"base_p95", NumberOrNull(b.p95)}, {"cand_p5", NumberOrNull(c.p5)},
                    {"cand_p95", NumberOrNull(c.p95)}, {"change", NumberOrNull(change)},
                    {"change_ci", Interval(g.change_ci_low, g.change_ci_high)},
                    {"method", gate::ToString(estimated ? g.method : gate::Method::kNone)}});
  }
  auto magnitude = [](const Json& r) {
    return r["change"].is_number() ? std::abs(r["change"].get<double>()) : -1.0;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const Json& a, const Json& b) { return magnitude(a) > magnitude(b); });
  return {{"base", ToJson(base)}, {"cand", ToJson(cand)}, {"rows", rows}};
}

Json ToJson(const store::OutboxEntry& e) {
  auto optional = [](const std::optional<TimePoint>& t) { return t ? Seconds(*t) : Json(nullptr); };
  return Json{{"id", e.id},
              {"endpoint", e.endpoint},
              {"event", e.event_type},
              {"idempotency_key", e.idempotency_key},
              {"state", ToString(e.state)},
              {"attempts", e.attempts},
              {"last_error", e.last_error},
              {"created_at", Seconds(e.created_at)},
              {"last_attempt_at", optional(e.last_attempt_at)},
              {"next_attempt_at", e.state == store::DeliveryState::kPending ? Seconds(e.next_attempt_at) : Json(nullptr)},
              {"delivered_at", optional(e.delivered_at)},
              {"payload", Json::parse(e.payload, nullptr, /*allow_exceptions=*/false)}};
}

Json DataAsOfJson(const std::optional<store::ReplicaLag>& lag) { return lag ? Seconds(lag->as_of) : Json(nullptr); }

}  // namespace perfgate::coordinator
