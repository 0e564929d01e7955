#include "coordinator/domain/regression_messages.h"

#include <optional>

#include "common/status_macros.h"
#include "wire/api_convert.h"
#include "wire/api_json.h"
#include "wire/convert.h"

namespace perfgate::coordinator {

using wire::SetMeasured;

v1::TriageEvent ToMessage(const store::RegressionEvent& e) {
  v1::TriageEvent m;
  if (e.from_state) m.set_from(wire::ToProto(*e.from_state));
  m.set_to(wire::ToProto(e.to_state));
  m.set_by(e.actor);
  m.set_note(e.note);
  m.set_commit(e.commit);
  wire::ToProto(e.at, m.mutable_at());
  return m;
}

v1::Regression ToMessage(const store::Regression& r) {
  v1::Regression m;
  m.set_id(r.id);
  m.set_benchmark(r.benchmark);
  m.set_metric(r.metric);
  m.set_sku(r.sku);
  m.set_branch(r.branch);
  m.set_unit(r.unit);
  m.set_direction(wire::ToProto(r.direction));
  m.set_good_commit(r.good_commit);
  m.set_bad_commit(r.bad_commit);
  m.set_first_bad_run_id(r.first_bad_run_id);
  SetMeasured(r.median_before, [&](double v) { m.set_median_before(v); });
  SetMeasured(r.median_after, [&](double v) { m.set_median_after(v); });
  SetMeasured(r.change, [&](double v) { m.set_change(v); });
  SetMeasured(r.p_value, [&](double v) { m.set_p_value(v); });
  m.set_state(wire::ToProto(r.state));
  m.set_fixed_by_commit(r.fixed_by_commit);
  wire::ToProto(r.detected_at, m.mutable_detected_at());
  wire::ToProto(r.updated_at, m.mutable_updated_at());
  for (const store::RegressionEvent& e : r.events) *m.add_events() = ToMessage(e);
  return m;
}

v1::ListRegressionsResponse ToMessage(const std::vector<store::Regression>& list) {
  v1::ListRegressionsResponse out;
  for (const store::Regression& r : list) *out.add_regressions() = ToMessage(r);
  return out;
}

absl::StatusOr<store::TriageChange> TriageFromBody(int64_t id, std::string_view body) {
  v1::TriageRequest m;
  PERFGATE_RETURN_IF_ERROR(wire::FromApiJson(body, &m, "body"));
  const std::optional<RegressionState> state = wire::FromProto(m.state());
  if (!state) {
    return absl::InvalidArgumentError(
        "state: must be REGRESSION_STATE_ACKNOWLEDGED, REGRESSION_STATE_INVESTIGATING, REGRESSION_STATE_FIXED, "
        "REGRESSION_STATE_ACCEPTED or REGRESSION_STATE_INVALID");
  }
  store::TriageChange c;
  c.id = id;
  c.state = *state;
  c.note = m.note();
  c.actor = m.by();
  c.commit = m.commit();
  return c;
}

}  // namespace perfgate::coordinator
