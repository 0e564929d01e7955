#include "coordinator/http_json.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>

#include "absl/strings/str_cat.h"
#include "common/bisection_state.h"
#include "common/json_number.h"
#include "common/stats.h"
#include "common/status_macros.h"
#include "coordinator/notification_events.h"
#include "gate/history_changes.h"
#include "gate/inference.h"

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

Json ToJson(const Regression& r) {
  Json events = Json::array();
  for (const RegressionEvent& e : r.events) {
    Json event = RegressionEventJson(e);
    event["at"] = Seconds(e.at);
    events.push_back(std::move(event));
  }
  Json j = RegressionJson(r);
  j["events"] = std::move(events);
  return j;
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
  for (const Regression& r : regressions) regs.push_back(ToJson(r));
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

namespace {

Json ToJson(const BisectionProbe& p) {
  return {{"commit", p.commit},         {"attempt", p.attempt},
          {"verdict", ToString(p.verdict)},     {"change", NumberOrNull(p.change)},
          {"ci", Interval(p.ci_low, p.ci_high)}, {"p_value", NumberOrNull(p.p_value)},
          {"threshold", NumberOrNull(p.threshold)},   {"rounds", p.rounds},
          {"note", p.note},             {"at", Seconds(p.at)}};
}

// Reads body's fields into the named targets: each key must be one of them
// and of its type; a key left out keeps its target as it is.
struct Fields {
  std::map<std::string, std::string*> text;
  std::map<std::string, double*> numbers;
  std::map<std::string, int64_t*> integers;
  std::map<std::string, std::pair<double*, double*>> intervals;
  std::map<std::string, Json*> raw;
};

absl::Status ReadField(const std::string& key, const Json& v, const Fields& f) {
  if (auto it = f.text.find(key); it != f.text.end()) {
    if (!v.is_string()) return absl::InvalidArgumentError(absl::StrCat(key, ": must be a string"));
    *it->second = v.get<std::string>();
  } else if (auto n = f.numbers.find(key); n != f.numbers.end()) {
    if (!v.is_number() && !v.is_null()) return absl::InvalidArgumentError(absl::StrCat(key, ": must be a number"));
    *n->second = v.is_null() ? store::kNotMeasured : v.get<double>();
  } else if (auto i = f.integers.find(key); i != f.integers.end()) {
    if (!v.is_number_integer()) return absl::InvalidArgumentError(absl::StrCat(key, ": must be an integer"));
    *i->second = v.get<int64_t>();
  } else if (auto c = f.intervals.find(key); c != f.intervals.end()) {
    if (!v.is_array() || v.size() != 2 || !(v[0].is_number() || v[0].is_null()) ||
        !(v[1].is_number() || v[1].is_null())) {
      return absl::InvalidArgumentError(absl::StrCat(key, ": must be [low, high]"));
    }
    *c->second.first = v[0].is_null() ? store::kNotMeasured : v[0].get<double>();
    *c->second.second = v[1].is_null() ? store::kNotMeasured : v[1].get<double>();
  } else if (auto r = f.raw.find(key); r != f.raw.end()) {
    *r->second = v;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("body: unknown field '", key, "'"));
  }
  return absl::OkStatus();
}

absl::Status ReadFields(const Json& body, const Fields& f) {
  if (!body.is_object()) return absl::InvalidArgumentError("body: not a JSON object");
  for (const auto& [key, value] : body.items()) PERFGATE_RETURN_IF_ERROR(ReadField(key, value, f));
  return absl::OkStatus();
}

absl::Status Required(const std::string& value, const char* name) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": must not be empty"));
  return absl::OkStatus();
}

}  // namespace

Json ToJson(const Bisection& b) {
  Json probes = Json::array();
  for (const BisectionProbe& p : b.probes) probes.push_back(ToJson(p));
  const BisectionOutcome& o = b.outcome;
  return {{"id", b.id},
          {"regression_id", b.regression_id == 0 ? Json(nullptr) : Json(b.regression_id)},
          {"good", b.good_commit},
          {"bad", b.bad_commit},
          {"benchmark", b.benchmark},
          {"metric", b.metric},
          {"commits", Json::parse(b.commits_json, nullptr, false)},
          {"settings", Json::parse(b.settings_json, nullptr, false)},
          {"state", ToString(b.state)},
          {"regression_size", NumberOrNull(o.regression_size)},
          {"culprit", o.culprit},
          {"change", NumberOrNull(o.change)},
          {"ci", Interval(o.ci_low, o.ci_high)},
          {"range_good", o.range_good},
          {"range_bad", o.range_bad},
          {"summary", o.summary},
          {"by", b.created_by},
          {"created_at", Seconds(b.created_at)},
          {"updated_at", Seconds(b.updated_at)},
          {"probes", probes}};
}

absl::StatusOr<Bisection> BisectionFromJson(const Json& body) {
  Bisection b;
  Json commits, settings = Json::object();
  PERFGATE_RETURN_IF_ERROR(ReadFields(
      body, Fields{.text = {{"good", &b.good_commit}, {"bad", &b.bad_commit}, {"benchmark", &b.benchmark},
                            {"metric", &b.metric}, {"by", &b.created_by}},
                   .integers = {{"regression_id", &b.regression_id}},
                   .raw = {{"commits", &commits}, {"settings", &settings}}}));
  PERFGATE_RETURN_IF_ERROR(Required(b.good_commit, "good"));
  PERFGATE_RETURN_IF_ERROR(Required(b.bad_commit, "bad"));
  if (b.regression_id < 0) return absl::InvalidArgumentError("regression_id: must be positive");
  if (!commits.is_array() || commits.empty()) {
    return absl::InvalidArgumentError("commits: must be a non-empty array of the commits after good, oldest first");
  }
  for (const Json& c : commits) {
    if (!c.is_string() || c.get<std::string>().empty()) {
      return absl::InvalidArgumentError("commits: every entry must be a commit");
    }
  }
  if (commits.back() != b.bad_commit) return absl::InvalidArgumentError("commits: the last must be bad");
  if (!settings.is_object()) return absl::InvalidArgumentError("settings: must be an object");
  b.commits_json = commits.dump();
  b.settings_json = settings.dump();
  return b;
}

absl::StatusOr<BisectionProbe> ProbeFromJson(const Json& body) {
  BisectionProbe p;
  int64_t attempt = 0, rounds = 0;
  std::string verdict;
  PERFGATE_RETURN_IF_ERROR(ReadFields(
      body, Fields{.text = {{"commit", &p.commit}, {"verdict", &verdict}, {"benchmark", &p.benchmark},
                            {"metric", &p.metric}, {"note", &p.note}},
                   .numbers = {{"change", &p.change}, {"p_value", &p.p_value}, {"threshold", &p.threshold}},
                   .integers = {{"attempt", &attempt}, {"rounds", &rounds}},
                   .intervals = {{"ci", {&p.ci_low, &p.ci_high}}}}));
  PERFGATE_RETURN_IF_ERROR(Required(p.commit, "commit"));
  const std::optional<ProbeVerdict> judged = ParseProbeVerdict(verdict);
  if (!judged) {
    return absl::InvalidArgumentError(
        absl::StrCat("verdict: '", verdict, "' is not carries, clean, undecided or failed"));
  }
  p.verdict = *judged;
  if (attempt < 1 || attempt > 1000) return absl::InvalidArgumentError("attempt: must be from 1 to 1000");
  if (rounds < 0 || rounds > 1000000) return absl::InvalidArgumentError("rounds: must be from 0 to 1000000");
  if (!std::isfinite(p.threshold) || p.threshold <= 0) {
    return absl::InvalidArgumentError("threshold: must be a positive relative change");
  }
  p.attempt = static_cast<int>(attempt);
  p.rounds = static_cast<int>(rounds);
  return p;
}

absl::StatusOr<BisectionOutcome> OutcomeFromJson(const Json& body) {
  BisectionOutcome o;
  std::string state;
  PERFGATE_RETURN_IF_ERROR(ReadFields(
      body, Fields{.text = {{"state", &state}, {"culprit", &o.culprit}, {"range_good", &o.range_good},
                            {"range_bad", &o.range_bad}, {"summary", &o.summary},
                            {"triage_note", &o.triage_note}},
                   .numbers = {{"change", &o.change}, {"regression_size", &o.regression_size}},
                   .intervals = {{"ci", {&o.ci_low, &o.ci_high}}}}));
  const std::optional<BisectionState> ended = ParseBisectionState(state);
  if (!ended || *ended == BisectionState::kRunning) {
    return absl::InvalidArgumentError(absl::StrCat("state: '", state, "' is not culprit, no_culprit or range"));
  }
  o.state = *ended;
  PERFGATE_RETURN_IF_ERROR(Required(o.summary, "summary"));
  if ((o.state == BisectionState::kCulprit) != !o.culprit.empty()) {
    return absl::InvalidArgumentError("culprit: required with state culprit and refused otherwise");
  }
  return o;
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
