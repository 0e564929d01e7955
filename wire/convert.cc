#include "wire/convert.h"

#include <cmath>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "common/status_macros.h"
#include "wire/field_error.h"

namespace perfgate::wire {
namespace {

bool ValidToken(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '/' || c == '{' || c == '}' || c == ',' ||
        c == '=') {
      return false;
    }
  }
  return true;
}

// Details are short facts; anything longer is a mistake, not a fact. Looser
// than the ingest checks (validate.h), which refuse first.
constexpr size_t kDetailKeyMost = 200;
constexpr size_t kDetailValueMost = 4096;

}  // namespace

v1::Direction ToProto(Direction d) {
  return d == Direction::kHigherIsBetter ? v1::HIGHER_IS_BETTER : v1::LOWER_IS_BETTER;
}

v1::CaseStatus ToProto(CaseStatus s) {
  switch (s) {
    case CaseStatus::kOk: return v1::CASE_OK;
    case CaseStatus::kTimedOut: return v1::CASE_TIMED_OUT;
    case CaseStatus::kSkipped: return v1::CASE_SKIPPED;
    case CaseStatus::kFailed: return v1::CASE_FAILED;
    case CaseStatus::kUnspecified: break;
  }
  return v1::CASE_STATUS_UNSPECIFIED;
}

v1::Trigger ToProto(Trigger t) {
  switch (t) {
    case Trigger::kCi: return v1::TRIGGER_CI;
    case Trigger::kSweep: return v1::TRIGGER_SWEEP;
    case Trigger::kManual: return v1::TRIGGER_MANUAL;
    case Trigger::kUnspecified: break;
  }
  return v1::TRIGGER_UNSPECIFIED;
}

v1::RunStatus ToProto(RunStatus s) {
  switch (s) {
    case RunStatus::kRunning: return v1::RUN_RUNNING;
    case RunStatus::kComplete: return v1::RUN_COMPLETE;
    case RunStatus::kFailed: return v1::RUN_FAILED;
    case RunStatus::kUnspecified: break;
  }
  return v1::RUN_STATUS_UNSPECIFIED;
}

void ToProto(const std::map<std::string, std::string>& m, google::protobuf::RepeatedPtrField<v1::TextEntry>* out) {
  for (const auto& [k, v] : m) {
    v1::TextEntry* e = out->Add();
    e->set_key(k);
    e->set_value(v);
  }
}

void ToProto(const BenchmarkId& id, v1::BenchmarkId* out) {
  out->set_suite(id.suite);
  out->set_name(id.name);
  ToProto(id.params, out->mutable_params());
}

void ToProto(const MetricSpec& m, v1::MetricSpec* out) {
  out->set_name(m.name);
  out->set_unit(m.unit);
  out->set_direction(ToProto(m.direction));
}

void ToProto(const CaseResult& c, v1::CaseResult* out) {
  ToProto(c.benchmark, out->mutable_benchmark());
  for (const MetricSpec& m : c.metrics) ToProto(m, out->add_metrics());
  out->mutable_samples()->Reserve(static_cast<int>(c.samples.size()));
  for (const Sample& s : c.samples) {
    v1::Sample* ps = out->add_samples();
    ps->set_index(s.index);
    ps->set_throttled(s.throttled);
    ps->mutable_values()->Add(s.values.begin(), s.values.end());
  }
  out->set_status(ToProto(c.status));
  out->set_reason(c.reason);
  out->set_noise(c.noise);
  if (c.bound) {
    v1::ValueBound* b = out->mutable_bound();
    b->set_metric(c.bound->metric);
    b->set_kind(c.bound->kind == ValueBound::Kind::kAtLeast ? v1::ValueBound::AT_LEAST : v1::ValueBound::AT_MOST);
    b->set_value(c.bound->value);
  }
}

void ToProto(const Environment& e, v1::Environment* out) {
  out->set_sku(e.sku);
  ToProto(e.fields, out->mutable_fields());
}

void ToProto(TimePoint t, google::protobuf::Timestamp* out) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  out->set_seconds(us / 1000000);
  out->set_nanos(static_cast<int32_t>((us % 1000000) * 1000));
}

void ToProto(const RunMeta& meta, v1::OpenRunRequest* out) {
  out->set_run_id(meta.run_id);
  out->set_agent_name(meta.agent_name);
  ToProto(meta.environment, out->mutable_environment());
  out->set_repo(meta.repo);
  out->set_branch(meta.branch);
  out->set_commit(meta.commit);
  out->set_trigger(ToProto(meta.trigger));
  out->set_ci_job(meta.ci_job);
  out->set_node(meta.node);
  ToProto(meta.started_at, out->mutable_started_at());
  for (const std::string& c : meta.parent_commits) out->add_parent_commits(c);
  ToProto(meta.details, out->mutable_details());
}

void ToProto(const CalibrationEntry& e, v1::CalibrationEntry* out) {
  out->set_benchmark(e.benchmark);
  out->set_metric(e.metric);
  out->set_unit(e.unit);
  out->set_direction(ToProto(e.direction));
  out->set_spread(e.spread);
  out->set_processes(e.processes);
}

void ToProto(const CalibrationSet& set, const std::string& agent_name, v1::PutCalibrationRequest* out) {
  out->set_agent_name(agent_name);
  out->set_node(set.node);
  ToProto(set.environment, out->mutable_environment());
  ToProto(set.measured_at, out->mutable_measured_at());
  for (const CalibrationEntry& e : set.entries) ToProto(e, out->add_entries());
}

TimePoint FromProto(const google::protobuf::Timestamp& t) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::seconds(t.seconds()) + std::chrono::nanoseconds(t.nanos())));
}

std::map<std::string, std::string> FromProto(const google::protobuf::RepeatedPtrField<v1::TextEntry>& entries) {
  std::map<std::string, std::string> out;
  for (const v1::TextEntry& e : entries) out[e.key()] = e.value();
  return out;
}

Environment FromProto(const v1::Environment& e) {
  Environment out;
  out.sku = e.sku();
  out.fields = FromProto(e.fields());
  return out;
}

BenchmarkId FromProto(const v1::BenchmarkId& id) {
  BenchmarkId out;
  out.suite = id.suite();
  out.name = id.name();
  out.params = FromProto(id.params());
  return out;
}

absl::StatusOr<Direction> FromProto(v1::Direction d, const std::string& field) {
  switch (d) {
    case v1::HIGHER_IS_BETTER: return Direction::kHigherIsBetter;
    case v1::LOWER_IS_BETTER: return Direction::kLowerIsBetter;
    default: return FieldError(field, "must be HIGHER_IS_BETTER or LOWER_IS_BETTER");
  }
}

absl::StatusOr<RunStatus> FromProto(v1::RunStatus s, const std::string& field) {
  switch (s) {
    case v1::RUN_RUNNING: return RunStatus::kRunning;
    case v1::RUN_COMPLETE: return RunStatus::kComplete;
    case v1::RUN_FAILED: return RunStatus::kFailed;
    default: return FieldError(field, "must be RUN_RUNNING, RUN_COMPLETE or RUN_FAILED");
  }
}

absl::StatusOr<std::optional<ValueBound>> BoundFromProto(const v1::CaseResult& c, const std::string& field) {
  if (!c.has_bound()) return std::nullopt;
  const v1::ValueBound& b = c.bound();
  ValueBound out;
  out.metric = b.metric();
  switch (b.kind()) {
    case v1::ValueBound::AT_LEAST: out.kind = ValueBound::Kind::kAtLeast; break;
    case v1::ValueBound::AT_MOST: out.kind = ValueBound::Kind::kAtMost; break;
    default: return FieldError(field + ".bound.kind", "must be AT_LEAST or AT_MOST");
  }
  if (!std::isfinite(b.value())) return FieldError(field + ".bound.value", absl::StrCat(b.value(), " is not finite"));
  out.value = b.value();
  bool known = false;
  for (const v1::MetricSpec& m : c.metrics()) known = known || m.name() == b.metric();
  if (!known) return FieldError(field + ".bound.metric", absl::StrCat("'", b.metric(), "' is none of the case's metrics"));
  if (c.samples_size() > 0) return FieldError(field + ".bound", "a case with samples gives values, not a bound");
  return out;
}

absl::StatusOr<CaseResult> FromProto(const v1::CaseResult& c, const std::string& field) {
  CaseResult out;
  out.benchmark = FromProto(c.benchmark());
  if (!ValidToken(out.benchmark.suite)) return FieldError(field + ".benchmark.suite", "must be a non-empty name without / { } , =");
  if (!ValidToken(out.benchmark.name)) return FieldError(field + ".benchmark.name", "must be a non-empty name without / { } , =");
  for (const auto& [k, v] : out.benchmark.params) {
    if (!ValidToken(k)) return FieldError(absl::StrCat(field, ".benchmark.params['", k, "']"), "parameter names must be non-empty, without / { } , =");
    if (v.find_first_of("{},") != std::string::npos || v.empty()) {
      return FieldError(absl::StrCat(field, ".benchmark.params['", k, "']"), "value must be non-empty, without { } ,");
    }
  }
  if (c.metrics().empty()) return FieldError(field + ".metrics", "a case needs at least one metric");
  std::set<std::string> names;
  for (int i = 0; i < c.metrics_size(); ++i) {
    const auto& m = c.metrics(i);
    const std::string f = absl::StrCat(field, ".metrics[", i, "]");
    if (!ValidToken(m.name())) return FieldError(f + ".name", "must be a non-empty name");
    if (!names.insert(m.name()).second) return FieldError(f + ".name", absl::StrCat("'", m.name(), "' appears twice"));
    if (m.unit().empty()) return FieldError(f + ".unit", "must not be empty");
    auto dir = FromProto(m.direction(), f + ".direction");
    PERFGATE_RETURN_IF_ERROR(dir);
    out.metrics.push_back({m.name(), m.unit(), *dir});
  }
  out.samples.reserve(static_cast<size_t>(c.samples_size()));
  for (int i = 0; i < c.samples_size(); ++i) {
    const auto& s = c.samples(i);
    // The field's name is made only for an error: a batch has 100 000 samples.
    auto f = [&] { return absl::StrCat(field, ".samples[", i, "]"); };
    if (s.values_size() != c.metrics_size()) {
      return FieldError(f() + ".values", absl::StrCat("has ", s.values_size(), " values for ", c.metrics_size(), " metrics"));
    }
    for (int j = 0; j < s.values_size(); ++j) {
      if (!std::isfinite(s.values(j))) {
        return FieldError(absl::StrCat(f(), ".values[", j, "]"),
                   absl::StrCat("metric '", c.metrics(j).name(), "' is ", s.values(j), "; samples must be finite"));
      }
    }
    out.samples.push_back(Sample{s.index(), {s.values().begin(), s.values().end()}, s.throttled()});
  }
  switch (c.status()) {
    case v1::CASE_STATUS_UNSPECIFIED: out.status = CaseStatus::kUnspecified; break;
    case v1::CASE_OK: out.status = CaseStatus::kOk; break;
    case v1::CASE_TIMED_OUT: out.status = CaseStatus::kTimedOut; break;
    case v1::CASE_SKIPPED: out.status = CaseStatus::kSkipped; break;
    case v1::CASE_FAILED: out.status = CaseStatus::kFailed; break;
    default: return FieldError(field + ".status", "unknown case status");
  }
  if (!std::isfinite(c.noise()) || c.noise() < 0) return FieldError(field + ".noise", "must be finite and >= 0");
  out.reason = c.reason();
  out.noise = c.noise();
  PERFGATE_ASSIGN_OR_RETURN(out.bound, BoundFromProto(c, field));
  return out;
}

absl::StatusOr<RunMeta> FromProto(const v1::OpenRunRequest& r) {
  RunMeta m;
  if (!IsUuid(r.run_id())) return FieldError("run_id", absl::StrCat("'", r.run_id(), "' is not a UUID"));
  if (r.agent_name().empty()) return FieldError("agent_name", "must not be empty");
  if (r.environment().sku().empty()) return FieldError("environment.sku", "must not be empty");
  if (r.branch().empty()) return FieldError("branch", "must not be empty");
  m.run_id = r.run_id();
  m.agent_name = r.agent_name();
  m.environment = FromProto(r.environment());
  m.repo = r.repo();
  m.branch = r.branch();
  m.commit = r.commit();
  switch (r.trigger()) {
    case v1::TRIGGER_CI: m.trigger = Trigger::kCi; break;
    case v1::TRIGGER_SWEEP: m.trigger = Trigger::kSweep; break;
    case v1::TRIGGER_MANUAL: m.trigger = Trigger::kManual; break;
    default: return FieldError("trigger", "must be TRIGGER_CI, TRIGGER_SWEEP or TRIGGER_MANUAL");
  }
  m.ci_job = r.ci_job();
  m.node = r.node();
  if (!r.has_started_at()) return FieldError("started_at", "must be set");
  m.started_at = FromProto(r.started_at());
  for (const std::string& c : r.parent_commits()) m.parent_commits.push_back(c);
  for (const v1::TextEntry& e : r.details()) {
    const std::string& k = e.key();
    const std::string& v = e.value();
    if (k.empty() || k.size() > kDetailKeyMost) {
      return FieldError("details", absl::StrCat("keys must be 1 to ", kDetailKeyMost, " characters"));
    }
    if (v.size() > kDetailValueMost) {
      return FieldError(absl::StrCat("details['", k, "']"),
                 absl::StrCat("is ", v.size(), " characters; at most ", kDetailValueMost));
    }
    m.details[k] = v;
  }
  return m;
}

absl::StatusOr<CalibrationEntry> FromProto(const v1::CalibrationEntry& e, const std::string& field) {
  CalibrationEntry out;
  out.benchmark = e.benchmark();
  out.metric = e.metric();
  out.unit = e.unit();
  auto direction = FromProto(e.direction(), field + ".direction");
  PERFGATE_RETURN_IF_ERROR(direction);
  out.direction = *direction;
  out.spread = e.spread();
  out.processes = e.processes();
  PERFGATE_RETURN_IF_ERROR(ValidateCalibrationEntry(out, field));
  return out;
}

absl::StatusOr<CalibrationSet> FromProto(const v1::PutCalibrationRequest& r) {
  if (r.agent_name().empty()) return FieldError("agent_name", "must not be empty");
  if (r.node().empty()) return FieldError("node", "must not be empty");
  if (r.environment().sku().empty()) return FieldError("environment.sku", "must not be empty");
  if (!r.has_measured_at()) return FieldError("measured_at", "must be set");
  if (r.entries().empty()) return FieldError("entries", "a calibration carries at least one entry");
  CalibrationSet set;
  set.node = r.node();
  set.environment = FromProto(r.environment());
  set.measured_at = FromProto(r.measured_at());
  std::set<std::pair<std::string, std::string>> seen;
  for (int i = 0; i < r.entries_size(); ++i) {
    const std::string field = absl::StrCat("entries[", i, "]");
    auto e = FromProto(r.entries(i), field);
    PERFGATE_RETURN_IF_ERROR(e);
    if (!seen.insert({e->benchmark, e->metric}).second) {
      return FieldError(field, absl::StrCat("benchmark ", e->benchmark, " metric '", e->metric,
                                     "' appears twice"));
    }
    set.entries.push_back(*std::move(e));
  }
  return set;
}

}  // namespace perfgate::wire
