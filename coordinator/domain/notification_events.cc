#include "coordinator/domain/notification_events.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "coordinator/domain/bisection_messages.h"
#include "coordinator/domain/regression_messages.h"
#include "perfgate/v1/notification.pb.h"
#include "wire/api_convert.h"
#include "wire/api_json.h"
#include "wire/gate_convert.h"

namespace perfgate::coordinator {
namespace {

using store::NotificationEvent;

v1::NotificationEvent Event(const char* type, const std::string& branch, const std::string& sku,
                            std::string dashboard_path) {
  v1::NotificationEvent e;
  e.set_version(kNotificationVersion);
  e.set_type(type);
  e.set_branch(branch);
  e.set_sku(sku);
  e.set_dashboard_path(std::move(dashboard_path));
  return e;
}

// What the outbox keeps: the event's type, branch and SKU for the
// endpoints' filters, and the message in the API's JSON as the payload.
NotificationEvent Queued(const v1::NotificationEvent& e) { return {e.type(), e.branch(), e.sku(), wire::ToApiJson(e)}; }

std::string RegressionPath(int64_t id) { return absl::StrCat("/#/regressions?id=", id); }

NotificationEvent RegressionNotification(const store::Regression& r, const store::RegressionEvent* triage) {
  v1::NotificationEvent e =
      Event(triage == nullptr ? "regression.new" : "regression.triage", r.branch, r.sku, RegressionPath(r.id));
  *e.mutable_regression() = ToMessage(r);
  e.mutable_regression()->clear_events();
  if (triage != nullptr) *e.mutable_triage() = ToMessage(*triage);
  return Queued(e);
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
  v1::NotificationEvent e =
      Event("bisection.finished", b.branch, b.sku, b.regression_id == 0 ? "" : RegressionPath(b.regression_id));
  v1::FinishedBisection* m = e.mutable_bisection();
  m->set_id(b.id);
  if (b.regression_id != 0) m->set_regression_id(b.regression_id);
  *m->mutable_outcome() = ToMessage(b.outcome);
  return Queued(e);
}

store::NotifyWith<store::StoredReport> GateFailed(const gate::GateResult& result) {
  if (result.outcome != gate::Outcome::kRegression) return {};
  return [&result](const store::StoredReport& report) -> std::optional<NotificationEvent> {
    v1::NotificationEvent e =
        Event("gate.failed", report.branch, report.sku, absl::StrCat("/#/report/", report.id));
    v1::GateFailure* g = e.mutable_gate();
    g->set_report_id(report.id);
    g->set_candidate_commit(report.commit);
    g->set_baseline_branch(report.baseline_branch);
    g->set_summary(result.summary);
    for (const gate::MetricVerdict& v : result.verdicts) {
      if (!v.gating || !gate::Fails(v.verdict)) continue;
      v1::FailedMetric* f = g->add_failed();
      f->set_benchmark(v.benchmark);
      f->set_metric(v.metric);
      f->set_verdict(wire::ToProto(v.verdict));
      wire::SetMeasured(v.change, [&](double c) { f->set_change(c); });
    }
    return Queued(e);
  };
}

}  // namespace perfgate::coordinator
