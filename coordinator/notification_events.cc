#include "coordinator/notification_events.h"

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/json_number.h"
#include "wire/gate_convert.h"

namespace perfgate::coordinator {
namespace {

using Json = nlohmann::json;
using store::NotificationEvent;

Json Seconds(TimePoint t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

NotificationEvent RegressionNotification(const store::Regression& r, const store::RegressionEvent* triage) {
  Json body = {{"type", triage == nullptr ? "regression.new" : "regression.triage"},
               {"branch", r.branch},
               {"sku", r.sku},
               {"regression", RegressionJson(r)},
               {"dashboard_path", absl::StrCat("/#/regressions?id=", r.id)}};
  if (triage != nullptr) body["triage"] = RegressionEventJson(*triage);
  return {body["type"].get<std::string>(), r.branch, r.sku, body.dump()};
}

}  // namespace

std::optional<NotificationEvent> RegressionFound(const store::Regression& r) {
  return RegressionNotification(r, nullptr);
}

std::optional<NotificationEvent> RegressionTriaged(const store::Regression& r) {
  if (r.events.empty()) return std::nullopt;
  return RegressionNotification(r, &r.events.back());
}

std::optional<NotificationEvent> BisectionFinished(const store::FinishedBisection& b) {
  const store::BisectionOutcome& o = b.outcome;
  const int64_t regression_id = b.regression_id;
  Json body = {{"type", "bisection.finished"},
               {"branch", b.branch},
               {"sku", b.sku},
               {"bisection",
                {{"id", b.id},
                 {"state", ToString(o.state)},
                 {"culprit", o.culprit},
                 {"change", NumberOrNull(o.change)},
                 {"ci", Json::array({NumberOrNull(o.ci_low), NumberOrNull(o.ci_high)})},
                 {"range", Json::array({o.range_good, o.range_bad})},
                 {"summary", o.summary}}},
               {"regression_id", regression_id == 0 ? Json(nullptr) : Json(regression_id)},
               {"dashboard_path", regression_id == 0 ? Json(nullptr)
                                                     : Json(absl::StrCat("/#/regressions?id=", regression_id))}};
  return NotificationEvent{"bisection.finished", b.branch, b.sku, body.dump()};
}

store::NotifyWith<store::StoredReport> GateFailed(const gate::GateResult& result) {
  if (result.outcome != gate::Outcome::kRegression) return {};
  return [&result](const store::StoredReport& report) -> std::optional<NotificationEvent> {
    Json failed = Json::array();
    for (const gate::MetricVerdict& v : result.verdicts) {
      if (!v.gating || !gate::Fails(v.verdict)) continue;
      failed.push_back({{"benchmark", v.benchmark},
                        {"metric", v.metric},
                        {"verdict", wire::VerdictName(v.verdict)},
                        {"change", NumberOrNull(v.change)}});
    }
    Json body = {{"type", "gate.failed"},
                 {"branch", report.branch},
                 {"sku", report.sku},
                 {"gate",
                  {{"report_id", report.id},
                   {"candidate_commit", report.commit},
                   {"baseline_branch", report.baseline_branch},
                   {"summary", result.summary},
                   {"failed", std::move(failed)}}},
                 {"dashboard_path", absl::StrCat("/#/report/", report.id)}};
    return NotificationEvent{"gate.failed", report.branch, report.sku, body.dump()};
  };
}

Json RegressionJson(const store::Regression& r) {
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
          {"median_before", NumberOrNull(r.median_before)},
          {"median_after", NumberOrNull(r.median_after)},
          {"change", NumberOrNull(r.change)},
          {"p_value", NumberOrNull(r.p_value)},
          {"state", ToString(r.state)},
          {"fixed_by_commit", r.fixed_by_commit},
          {"detected_at", Seconds(r.detected_at)},
          {"updated_at", Seconds(r.updated_at)}};
}

Json RegressionEventJson(const store::RegressionEvent& e) {
  return {{"from", e.from_state ? ToString(*e.from_state) : ""},
          {"to", ToString(e.to_state)},
          {"by", e.actor},
          {"note", e.note},
          {"commit", e.commit}};
}

}  // namespace perfgate::coordinator
