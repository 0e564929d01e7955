#include "coordinator/domain/bisection_messages.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "wire/api_json.h"
#include "wire/api_convert.h"
#include "wire/convert.h"

namespace perfgate::coordinator {
namespace {

using store::kNotMeasured;
using wire::SetMeasured;

// A value a body may leave out (not measured): NaN then; when sent, finite.
absl::StatusOr<double> Measured(bool sent, double value, const char* name) {
  if (!sent) return kNotMeasured;
  if (!std::isfinite(value)) return absl::InvalidArgumentError(absl::StrCat(name, ": must be a finite number"));
  return value;
}

// The ends of an interval a body may leave out; both finite when sent.
absl::Status ReadInterval(bool sent, const v1::ChangeInterval& ci, double* low, double* high) {
  wire::GetInterval(sent, ci, low, high);
  if (sent && !(std::isfinite(*low) && std::isfinite(*high) && *low <= *high)) {
    return absl::InvalidArgumentError("ci: low and high must be finite numbers, low at most high");
  }
  return absl::OkStatus();
}

absl::Status Required(const std::string& value, const char* name) {
  if (value.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": must not be empty"));
  return absl::OkStatus();
}

v1::BisectionProbe ProbeMessage(const store::BisectionProbe& p) {
  v1::BisectionProbe m;
  m.set_commit(p.commit);
  m.set_attempt(static_cast<uint32_t>(p.attempt));
  m.set_verdict(wire::ToProto(p.verdict));
  SetMeasured(p.change, [&](double v) { m.set_change(v); });
  if (auto ci = wire::IntervalOf(p.ci_low, p.ci_high)) *m.mutable_ci() = *ci;
  SetMeasured(p.p_value, [&](double v) { m.set_p_value(v); });
  m.set_threshold(p.threshold);
  m.set_rounds(static_cast<uint32_t>(p.rounds));
  m.set_note(p.note);
  wire::ToProto(p.at, m.mutable_at());
  m.set_benchmark(p.benchmark);
  m.set_metric(p.metric);
  return m;
}

// The outcome's fields of `m`, a v1::Bisection or a v1::BisectionOutcome
// (the same names in both).
template <typename Message>
void SetOutcome(const store::BisectionOutcome& o, Message& m) {
  SetMeasured(o.regression_size, [&](double v) { m.set_regression_size(v); });
  m.set_culprit(o.culprit);
  SetMeasured(o.change, [&](double v) { m.set_change(v); });
  if (auto ci = wire::IntervalOf(o.ci_low, o.ci_high)) *m.mutable_ci() = *ci;
  m.set_range_good(o.range_good);
  m.set_range_bad(o.range_bad);
  m.set_summary(o.summary);
}

}  // namespace

v1::BisectionOutcome ToMessage(const store::BisectionOutcome& o) {
  v1::BisectionOutcome m;
  m.set_state(wire::ToProto(o.state));
  SetOutcome(o, m);
  m.set_triage_note(o.triage_note);
  return m;
}

absl::StatusOr<v1::Bisection> ToMessage(const store::Bisection& b) {
  v1::Bisection m;
  m.set_id(b.id);
  m.set_regression_id(b.regression_id);
  m.set_good(b.good_commit);
  m.set_bad(b.bad_commit);
  m.set_benchmark(b.benchmark);
  m.set_metric(b.metric);
  const nlohmann::json commits = nlohmann::json::parse(b.commits_json, nullptr, /*allow_exceptions=*/false);
  if (!commits.is_array()) return absl::InternalError(absl::StrCat("bisection ", b.id, ": its stored plan is not a list"));
  for (const nlohmann::json& c : commits) {
    if (c.is_string()) m.add_commits(c.get<std::string>());
  }
  if (absl::Status s = wire::FromApiJson(b.settings_json, m.mutable_settings(), "settings"); !s.ok()) {
    return absl::InternalError(absl::StrCat("bisection ", b.id, ": its stored settings are unreadable: ", s.message()));
  }
  m.set_state(wire::ToProto(b.state));
  SetOutcome(b.outcome, m);
  m.set_by(b.created_by);
  wire::ToProto(b.created_at, m.mutable_created_at());
  wire::ToProto(b.updated_at, m.mutable_updated_at());
  for (const store::BisectionProbe& p : b.probes) *m.add_probes() = ProbeMessage(p);
  return m;
}

absl::StatusOr<v1::ListBisectionsResponse> ToMessage(const std::vector<store::Bisection>& list) {
  v1::ListBisectionsResponse out;
  for (const store::Bisection& b : list) {
    PERFGATE_ASSIGN_OR_RETURN(*out.add_bisections(), ToMessage(b));
  }
  return out;
}

absl::StatusOr<store::Bisection> BisectionFromBody(std::string_view body) {
  v1::CreateBisectionRequest m;
  PERFGATE_RETURN_IF_ERROR(wire::FromApiJson(body, &m, "body"));
  store::Bisection b;
  b.good_commit = m.good();
  b.bad_commit = m.bad();
  PERFGATE_RETURN_IF_ERROR(Required(b.good_commit, "good"));
  PERFGATE_RETURN_IF_ERROR(Required(b.bad_commit, "bad"));
  if (m.regression_id() < 0) return absl::InvalidArgumentError("regression_id: must be positive");
  if (m.commits().empty()) {
    return absl::InvalidArgumentError("commits: must be a non-empty list of the commits after good, oldest first");
  }
  nlohmann::json commits = nlohmann::json::array();
  for (const std::string& c : m.commits()) {
    if (c.empty()) return absl::InvalidArgumentError("commits: every entry must be a commit");
    commits.push_back(c);
  }
  if (m.commits(m.commits_size() - 1) != b.bad_commit) return absl::InvalidArgumentError("commits: the last must be bad");
  b.regression_id = m.regression_id();
  b.benchmark = m.benchmark();
  b.metric = m.metric();
  b.created_by = m.by();
  b.commits_json = commits.dump();
  b.settings_json = wire::ToApiJson(m.settings());
  return b;
}

absl::StatusOr<store::BisectionProbe> ProbeFromBody(std::string_view body) {
  v1::BisectionProbe m;
  PERFGATE_RETURN_IF_ERROR(wire::FromApiJson(body, &m, "body"));
  store::BisectionProbe p;
  p.commit = m.commit();
  PERFGATE_RETURN_IF_ERROR(Required(p.commit, "commit"));
  const std::optional<ProbeVerdict> verdict = wire::FromProto(m.verdict());
  if (!verdict) {
    return absl::InvalidArgumentError(
        "verdict: must be PROBE_VERDICT_CARRIES, PROBE_VERDICT_CLEAN, PROBE_VERDICT_UNDECIDED or PROBE_VERDICT_FAILED");
  }
  p.verdict = *verdict;
  if (m.attempt() < 1 || m.attempt() > 1000) return absl::InvalidArgumentError("attempt: must be from 1 to 1000");
  if (m.rounds() > 1000000) return absl::InvalidArgumentError("rounds: must be from 0 to 1000000");
  if (!std::isfinite(m.threshold()) || m.threshold() <= 0) {
    return absl::InvalidArgumentError("threshold: must be a positive relative change");
  }
  p.attempt = static_cast<int>(m.attempt());
  p.rounds = static_cast<int>(m.rounds());
  PERFGATE_ASSIGN_OR_RETURN(p.change, Measured(m.has_change(), m.change(), "change"));
  PERFGATE_ASSIGN_OR_RETURN(p.p_value, Measured(m.has_p_value(), m.p_value(), "p_value"));
  PERFGATE_RETURN_IF_ERROR(ReadInterval(m.has_ci(), m.ci(), &p.ci_low, &p.ci_high));
  p.benchmark = m.benchmark();
  p.metric = m.metric();
  p.note = m.note();
  return p;
}

absl::StatusOr<store::BisectionOutcome> OutcomeFromBody(std::string_view body) {
  v1::BisectionOutcome m;
  PERFGATE_RETURN_IF_ERROR(wire::FromApiJson(body, &m, "body"));
  store::BisectionOutcome o;
  const std::optional<BisectionState> ended = wire::FromProto(m.state());
  if (!ended || *ended == BisectionState::kRunning) {
    return absl::InvalidArgumentError(
        "state: must be BISECTION_STATE_CULPRIT, BISECTION_STATE_NO_CULPRIT or BISECTION_STATE_RANGE");
  }
  o.state = *ended;
  o.summary = m.summary();
  PERFGATE_RETURN_IF_ERROR(Required(o.summary, "summary"));
  o.culprit = m.culprit();
  if ((o.state == BisectionState::kCulprit) != !o.culprit.empty()) {
    return absl::InvalidArgumentError("culprit: required with state culprit and refused otherwise");
  }
  PERFGATE_ASSIGN_OR_RETURN(o.change, Measured(m.has_change(), m.change(), "change"));
  PERFGATE_ASSIGN_OR_RETURN(o.regression_size, Measured(m.has_regression_size(), m.regression_size(), "regression_size"));
  PERFGATE_RETURN_IF_ERROR(ReadInterval(m.has_ci(), m.ci(), &o.ci_low, &o.ci_high));
  o.range_good = m.range_good();
  o.range_bad = m.range_bad();
  o.triage_note = m.triage_note();
  return o;
}

}  // namespace perfgate::coordinator
