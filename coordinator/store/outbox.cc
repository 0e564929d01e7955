// The outbox rows written inside other repositories' transactions, and the
// generic JSON bodies of the events they carry.
#include "coordinator/store/outbox.h"

#include "absl/strings/str_cat.h"
#include "common/json_number.h"
#include "coordinator/store/sql.h"
#include "wire/gate_convert.h"

namespace perfgate::coordinator::store {

int EnqueueInTransaction(pqxx::transaction_base& txn, const NotificationEvent& e) {
  const pqxx::result rows = txn.exec_params(
      "INSERT INTO notification_outbox (endpoint_id, event_type, payload) "
      "SELECT id, $1, $2 FROM notification_endpoints WHERE $1 = ANY (events) "
      "AND perfgate_glob_match(branch, $3) AND perfgate_glob_match(sku, $4) RETURNING id",
      e.type, e.payload, e.branch, e.sku);
  return static_cast<int>(rows.size());
}

NotificationEvent RegressionNotification(const Regression& r, const RegressionEvent* triage) {
  Json regression = RegressionJson(r);
  Json body = {{"type", triage == nullptr ? "regression.new" : "regression.triage"},
               {"branch", r.branch},
               {"sku", r.sku},
               {"regression", std::move(regression)},
               {"dashboard_path", absl::StrCat("/#/regressions?id=", r.id)}};
  if (triage != nullptr) {
    body["triage"] = RegressionEventJson(*triage);
  }
  return {body["type"].get<std::string>(), r.branch, r.sku, body.dump()};
}

NotificationEvent BisectionNotification(int64_t bisection_id, const BisectionOutcome& o, int64_t regression_id,
                                        const std::string& branch, const std::string& sku) {
  Json body = {{"type", "bisection.finished"},
               {"branch", branch},
               {"sku", sku},
               {"bisection",
                {{"id", bisection_id},
                 {"state", ToString(o.state)},
                 {"culprit", o.culprit},
                 {"change", NumberOrNull(o.change)},
                 {"ci", Json::array({NumberOrNull(o.ci_low), NumberOrNull(o.ci_high)})},
                 {"range", Json::array({o.range_good, o.range_bad})},
                 {"summary", o.summary}}},
               {"regression_id", regression_id == 0 ? Json(nullptr) : Json(regression_id)},
               {"dashboard_path", regression_id == 0 ? Json(nullptr)
                                                     : Json(absl::StrCat("/#/regressions?id=", regression_id))}};
  return {"bisection.finished", branch, sku, body.dump()};
}

NotificationEvent GateFailedNotification(int64_t report_id, const std::string& branch, const std::string& sku,
                                         const std::string& commit, const std::string& baseline_branch,
                                         const gate::GateResult& result) {
  Json failed = Json::array();
  for (const gate::MetricVerdict& v : result.verdicts) {
    if (!v.gating || !gate::Fails(v.verdict)) continue;
    failed.push_back({{"benchmark", v.benchmark},
                      {"metric", v.metric},
                      {"verdict", wire::VerdictName(v.verdict)},
                      {"change", NumberOrNull(v.change)}});
  }
  Json body = {{"type", "gate.failed"},
               {"branch", branch},
               {"sku", sku},
               {"gate",
                {{"report_id", report_id},
                 {"candidate_commit", commit},
                 {"baseline_branch", baseline_branch},
                 {"summary", result.summary},
                 {"failed", std::move(failed)}}},
               {"dashboard_path", absl::StrCat("/#/report/", report_id)}};
  return {"gate.failed", branch, sku, body.dump()};
}

}  // namespace perfgate::coordinator::store
