#include "coordinator/http_json.h"

#include <algorithm>
#include <cmath>

#include "common/stats.h"
#include "gate/history_changes.h"
#include "gate/inference.h"

namespace perfgate::coordinator {
namespace {

using Json = nlohmann::json;

Json Seconds(TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

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
          {"median", Number(s.median)}, {"mean", Number(s.mean)}, {"stdev", Number(s.stdev)},
          {"min", Number(s.min)},     {"max", Number(s.max)},   {"noise", Number(s.noise)},
          {"mad", Number(s.mad)},     {"p5", Number(s.p5)},     {"p95", Number(s.p95)},
          {"median_ci_low", Number(s.median_ci_low)}, {"median_ci_high", Number(s.median_ci_high)},
          {"status", ToString(s.status)}, {"reason", s.reason}};
}

Json ToJson(const Verdict& v) {
  return {{"report_id", v.report_id}, {"outcome", v.outcome}, {"baseline_branch", v.baseline_branch},
          {"created_at", Seconds(v.created_at)}};
}

Json ToJson(const Regression& r) {
  Json events = Json::array();
  for (const RegressionEvent& e : r.events) {
    events.push_back({{"from", e.from_state}, {"to", e.to_state}, {"by", e.actor}, {"note", e.note},
                      {"commit", e.commit}, {"at", Seconds(e.at)}});
  }
  return {{"id", r.id},
          {"benchmark", r.benchmark},
          {"metric", r.metric},
          {"sku", r.sku},
          {"branch", r.branch},
          {"unit", r.unit},
          {"direction", ToString(r.direction)},
          {"good_commit", r.good_commit},
          {"bad_commit", r.bad_commit},
          {"first_bad_run_id", r.first_bad_run_id},
          {"median_before", Number(r.median_before)},
          {"median_after", Number(r.median_after)},
          {"change", Number(r.change)},
          {"p_value", Number(r.p_value)},
          {"state", r.state},
          {"fixed_by_commit", r.fixed_by_commit},
          {"detected_at", Seconds(r.detected_at)},
          {"updated_at", Seconds(r.updated_at)},
          {"events", events}};
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
                        {"node_median", Number(o.node_median)}, {"fleet_median", Number(o.fleet_median)},
                        {"mad", Number(o.mad)}, {"deviation", Number(o.deviation)},
                        {"side", gate::ToString(o.side)}, {"nodes", o.nodes},
                        {"differing_fields", fields}});
  }
  Json nodes = Json::array();
  for (const gate::FleetNode& n : report.node_summary) {
    nodes.push_back({{"node", n.node}, {"run_id", n.run_id}, {"worse", n.worse}, {"better", n.better}});
  }
  return {{"nodes", report.nodes}, {"k", report.k}, {"outliers", outliers}, {"node_summary", nodes}};
}

Json SeriesJson(const Series& series, const std::vector<Regression>& regressions) {
  Json points = Json::array();
  for (const SeriesPoint& p : series.points) {
    points.push_back({{"run_id", p.point.run_id}, {"commit", p.point.commit},
                      {"branch", p.point.branch}, {"node", p.point.node},
                      {"t", Seconds(p.point.finished_at)}, {"median", Number(p.point.median)},
                      {"p5", Number(p.p5)}, {"p95", Number(p.p95)}, {"n", p.point.n},
                      {"n_throttled", p.n_throttled}, {"invalid_reasons", p.invalid_reasons}});
  }
  const ValidHistory valid = ValidPoints(series);
  Json changes = Json::array();
  for (const HistoryChange& c : gate::FindHistoryChanges(valid.history)) {
    const size_t at = valid.source_index[c.index];
    changes.push_back({{"index", at}, {"commit", series.points[at].point.commit},
                       {"run_id", series.points[at].point.run_id},
                       {"median_before", Number(c.median_before)},
                       {"median_after", Number(c.median_after)}, {"change", Number(c.change)},
                       {"p_value", Number(c.p_value)}});
  }
  Json regs = Json::array();
  for (const Regression& r : regressions) regs.push_back(ToJson(r));
  return {{"unit", series.unit}, {"direction", ToString(series.direction)}, {"points", points},
          {"changes", changes}, {"regressions", regs}};
}

Json CompareJson(const RunRecord& base, const std::vector<MetricSummary>& base_sums,
                 const RunRecord& cand, const std::vector<MetricSummary>& cand_sums) {
  std::map<std::pair<std::string, std::string>, const MetricSummary*> by_key;
  for (const MetricSummary& s : base_sums) by_key[{s.benchmark, s.metric}] = &s;
  std::vector<Json> rows;
  for (const MetricSummary& c : cand_sums) {
    auto it = by_key.find({c.benchmark, c.metric});
    if (it == by_key.end()) continue;
    const MetricSummary& b = *it->second;
    const double change = gate::RelativeChange(b.median, c.median,
                                                c.direction == Direction::kHigherIsBetter);
    rows.push_back({{"benchmark", c.benchmark}, {"metric", c.metric}, {"unit", c.unit},
                    {"direction", ToString(c.direction)}, {"base_median", Number(b.median)},
                    {"cand_median", Number(c.median)}, {"base_p5", Number(b.p5)},
                    {"base_p95", Number(b.p95)}, {"cand_p5", Number(c.p5)},
                    {"cand_p95", Number(c.p95)}, {"change", Number(change)}});
  }
  auto magnitude = [](const Json& r) {
    return r["change"].is_number() ? std::abs(r["change"].get<double>()) : -1.0;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const Json& a, const Json& b) { return magnitude(a) > magnitude(b); });
  return {{"base", ToJson(base)}, {"cand", ToJson(cand)}, {"rows", rows}};
}

Json DataAsOfJson(const std::optional<store::ReplicaLag>& lag) { return lag ? Seconds(lag->as_of) : Json(nullptr); }

}  // namespace perfgate::coordinator
