// The outbox rows written inside other repositories' transactions, and the
// generic JSON bodies of the events they carry.
#include "coordinator/store/outbox.h"

#include "absl/strings/str_cat.h"
#include "coordinator/store/sql.h"

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
    body["triage"] = {{"from", triage->from_state}, {"to", triage->to_state}, {"by", triage->actor},
                      {"note", triage->note},       {"commit", triage->commit}};
  }
  return {body["type"].get<std::string>(), r.branch, r.sku, body.dump()};
}

NotificationEvent GateFailedNotification(int64_t report_id, const std::string& branch, const std::string& sku,
                                         const std::string& commit, const std::string& baseline_branch,
                                         const std::string& report_json) {
  Json report = Json::parse(report_json, nullptr, /*allow_exceptions=*/false);
  Json failed = Json::array();
  if (report.is_object() && report.contains("verdicts") && report["verdicts"].is_array()) {
    for (const Json& v : report["verdicts"]) {
      const std::string verdict = v.value("verdict", "");
      const bool fails =
          verdict == "VERDICT_REGRESSION" || verdict == "VERDICT_BELOW_FLOOR" || verdict == "VERDICT_MISSING";
      if (fails && v.value("gating", true)) {
        failed.push_back({{"benchmark", v.value("benchmark", "")},
                          {"metric", v.value("metric", "")},
                          {"verdict", verdict},
                          {"change", v.value("change", 0.0)}});
      }
    }
  }
  Json body = {{"type", "gate.failed"},
               {"branch", branch},
               {"sku", sku},
               {"gate",
                {{"report_id", report_id},
                 {"candidate_commit", commit},
                 {"baseline_branch", baseline_branch},
                 {"summary", report.is_object() ? report.value("summary", "") : ""},
                 {"failed", std::move(failed)}}},
               {"dashboard_path", absl::StrCat("/#/report/", report_id)}};
  return {"gate.failed", branch, sku, body.dump()};
}

}  // namespace perfgate::coordinator::store
