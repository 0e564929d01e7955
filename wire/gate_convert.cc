#include "wire/gate_convert.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "wire/api_json.h"
#include "wire/convert.h"

namespace perfgate::wire {
namespace {

absl::Status Unknown(const std::string& field, int value) {
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": unknown value ", value, " (from a newer coordinator?)"));
}

absl::StatusOr<gate::Verdict> VerdictFromProto(v1::Verdict v, const std::string& field) {
  using gate::Verdict;
  switch (v) {
    case v1::VERDICT_PASS: return Verdict::kPass;
    case v1::VERDICT_REGRESSION: return Verdict::kRegression;
    case v1::VERDICT_IMPROVEMENT: return Verdict::kImprovement;
    case v1::VERDICT_BELOW_FLOOR: return Verdict::kBelowFloor;
    case v1::VERDICT_MISSING: return Verdict::kMissing;
    case v1::VERDICT_NO_BASELINE: return Verdict::kNoBaseline;
    case v1::VERDICT_TOO_NOISY: return Verdict::kTooNoisy;
    case v1::VERDICT_INVALID_ENVIRONMENT: return Verdict::kInvalidEnvironment;
    case v1::VERDICT_TOO_FEW_RUNS: return Verdict::kTooFewRuns;
    case v1::VERDICT_UNDECIDED: return Verdict::kUndecided;
    case v1::VERDICT_UNCONFIRMED: return Verdict::kUnconfirmed;
    default: return Unknown(field, v);
  }
}

absl::StatusOr<gate::Method> MethodFromProto(v1::TestMethod m, const std::string& field) {
  switch (m) {
    // Reports stored before the method was recorded carry none: no test is known.
    case v1::TEST_METHOD_UNSPECIFIED:
    case v1::TEST_METHOD_NONE: return gate::Method::kNone;
    case v1::TEST_METHOD_SAMPLES: return gate::Method::kSamples;
    case v1::TEST_METHOD_HISTORY: return gate::Method::kHistory;
    case v1::TEST_METHOD_BLOCKS: return gate::Method::kBlocks;
    case v1::TEST_METHOD_CALIBRATED: return gate::Method::kCalibrated;
    case v1::TEST_METHOD_COUNT: return gate::Method::kCount;
    default: return Unknown(field, m);
  }
}

absl::StatusOr<gate::MetricVerdict> MetricFromProto(const v1::MetricVerdict& m,
                                                    const std::string& field) {
  gate::MetricVerdict v;
  v.benchmark = m.benchmark();
  v.metric = m.metric();
  v.unit = m.unit();
  auto direction = FromProto(m.direction(), field + ".direction");
  PERFGATE_RETURN_IF_ERROR(direction);
  v.direction = *direction;
  auto verdict = VerdictFromProto(m.verdict(), field + ".verdict");
  PERFGATE_RETURN_IF_ERROR(verdict);
  v.verdict = *verdict;
  auto method = MethodFromProto(m.method(), field + ".method");
  PERFGATE_RETURN_IF_ERROR(method);
  v.method = *method;
  v.baseline_median = m.baseline_median();
  v.candidate_median = m.candidate_median();
  v.change = m.change();
  v.change_ci_low = m.change_ci_low();
  v.change_ci_high = m.change_ci_high();
  v.p_value = m.p_value();
  v.p_adjusted = m.p_adjusted();
  v.tolerance = m.tolerance();
  v.floor = m.floor();
  v.candidate_noise = m.candidate_noise();
  v.gating = m.gating();
  v.candidate_samples = m.candidate_samples();
  v.baseline_samples = m.baseline_samples();
  v.baseline_runs = m.baseline_runs();
  v.note = m.note();
  return v;
}

// An older coordinator sent no outcome: a gating metric that failed makes a
// regression, anything else a pass (it knew no inconclusive outcome).
gate::Outcome OutcomeFromProto(v1::GateOutcome o, const std::vector<gate::MetricVerdict>& verdicts) {
  switch (o) {
    case v1::GATE_PASS: return gate::Outcome::kPass;
    case v1::GATE_REGRESSION: return gate::Outcome::kRegression;
    case v1::GATE_INCONCLUSIVE: return gate::Outcome::kInconclusive;
    default: break;
  }
  const bool failed = std::any_of(verdicts.begin(), verdicts.end(), [](const gate::MetricVerdict& v) {
    return v.gating && gate::Fails(v.verdict);
  });
  return failed ? gate::Outcome::kRegression : gate::Outcome::kPass;
}

// gate::StopReason and v1::AbStop list the same reasons in the same order,
// kNone as AB_STOP_UNSPECIFIED (a test holds the names together).
absl::Status CaseRoundsFromProto(const v1::GateReport& report, gate::GateReport* out) {
  for (int i = 0; i < report.case_rounds_size(); ++i) {
    const v1::CaseRounds& c = report.case_rounds(i);
    if (!v1::AbStop_IsValid(c.stopped()) || c.stopped() > v1::AB_STOP_COUNTED) {
      return Unknown(absl::StrCat("case_rounds[", i, "].stopped"), c.stopped());
    }
    out->case_rounds.push_back({c.benchmark(), c.rounds(), static_cast<gate::StopReason>(c.stopped())});
  }
  return absl::OkStatus();
}

}  // namespace

v1::AbStop ToProto(gate::StopReason r) { return static_cast<v1::AbStop>(static_cast<int>(r)); }

v1::Verdict ToProto(gate::Verdict v) {
  using gate::Verdict;
  switch (v) {
    case Verdict::kPass: return v1::VERDICT_PASS;
    case Verdict::kRegression: return v1::VERDICT_REGRESSION;
    case Verdict::kImprovement: return v1::VERDICT_IMPROVEMENT;
    case Verdict::kBelowFloor: return v1::VERDICT_BELOW_FLOOR;
    case Verdict::kMissing: return v1::VERDICT_MISSING;
    case Verdict::kNoBaseline: return v1::VERDICT_NO_BASELINE;
    case Verdict::kTooNoisy: return v1::VERDICT_TOO_NOISY;
    case Verdict::kInvalidEnvironment: return v1::VERDICT_INVALID_ENVIRONMENT;
    case Verdict::kTooFewRuns: return v1::VERDICT_TOO_FEW_RUNS;
    case Verdict::kUndecided: return v1::VERDICT_UNDECIDED;
    case Verdict::kUnconfirmed: return v1::VERDICT_UNCONFIRMED;
  }
  return v1::VERDICT_UNSPECIFIED;
}

std::string VerdictName(gate::Verdict v) { return v1::Verdict_Name(ToProto(v)); }

v1::TestMethod ToProto(gate::Method m) {
  switch (m) {
    case gate::Method::kNone: return v1::TEST_METHOD_NONE;
    case gate::Method::kBlocks: return v1::TEST_METHOD_BLOCKS;
    case gate::Method::kHistory: return v1::TEST_METHOD_HISTORY;
    case gate::Method::kCalibrated: return v1::TEST_METHOD_CALIBRATED;
    case gate::Method::kSamples: return v1::TEST_METHOD_SAMPLES;
    case gate::Method::kCount: return v1::TEST_METHOD_COUNT;
  }
  return v1::TEST_METHOD_UNSPECIFIED;
}

v1::GateOutcome ToProto(gate::Outcome o) {
  switch (o) {
    case gate::Outcome::kPass: return v1::GATE_PASS;
    case gate::Outcome::kRegression: return v1::GATE_REGRESSION;
    case gate::Outcome::kInconclusive: return v1::GATE_INCONCLUSIVE;
  }
  return v1::GATE_OUTCOME_UNSPECIFIED;
}

v1::GateMode ToProto(gate::Mode m) {
  return m == gate::Mode::kAb ? v1::GATE_MODE_AB : v1::GATE_MODE_HISTORY;
}

void ToProto(const gate::GateResult& result, double fdr, v1::GateReport* out) {
  out->set_mode(ToProto(result.mode));
  out->set_fdr(fdr);
  for (const std::string& r : result.invalid_reasons) out->add_invalid_reasons(r);
  for (const gate::MetricVerdict& v : result.verdicts) {
    v1::MetricVerdict* m = out->add_verdicts();
    m->set_benchmark(v.benchmark);
    m->set_metric(v.metric);
    m->set_unit(v.unit);
    m->set_direction(ToProto(v.direction));
    m->set_baseline_median(v.baseline_median);
    m->set_candidate_median(v.candidate_median);
    m->set_change(v.change);
    m->set_tolerance(v.tolerance);
    m->set_floor(v.floor);
    m->set_verdict(ToProto(v.verdict));
    m->set_gating(v.gating);
    m->set_candidate_samples(v.candidate_samples);
    m->set_baseline_runs(v.baseline_runs);
    m->set_note(v.note);
    m->set_change_ci_low(v.change_ci_low);
    m->set_change_ci_high(v.change_ci_high);
    m->set_p_value(v.p_value);
    m->set_p_adjusted(v.p_adjusted);
    m->set_method(ToProto(v.method));
    m->set_candidate_noise(v.candidate_noise);
    m->set_baseline_samples(v.baseline_samples);
  }
  out->set_outcome(ToProto(result.outcome));
  out->set_summary(result.summary);
}

void ToProto(const gate::GateReport& report, v1::GateReport* out) {
  out->set_report_id(report.report_id);
  out->set_candidate_run_id(report.candidate_run_id);
  out->set_sku(report.sku);
  out->set_candidate_branch(report.candidate_branch);
  out->set_candidate_commit(report.candidate_commit);
  out->set_baseline_branch(report.baseline_branch);
  for (const std::string& id : report.baseline_run_ids) out->add_baseline_run_ids(id);
  out->set_candidate_image_digest(report.candidate_image_digest);
  for (const std::string& d : report.baseline_image_digests) out->add_baseline_image_digests(d);
  ToProto(report.result, report.fdr, out);
  for (const gate::CaseRounds& c : report.case_rounds) {
    v1::CaseRounds* m = out->add_case_rounds();
    m->set_benchmark(c.benchmark);
    m->set_rounds(c.rounds);
    m->set_stopped(ToProto(c.stopped));
  }
}

absl::StatusOr<gate::GateReport> FromProto(const v1::GateReport& report) {
  gate::GateReport out;
  out.report_id = report.report_id();
  out.candidate_run_id = report.candidate_run_id();
  out.sku = report.sku();
  out.candidate_branch = report.candidate_branch();
  out.candidate_commit = report.candidate_commit();
  out.baseline_branch = report.baseline_branch();
  out.baseline_run_ids.assign(report.baseline_run_ids().begin(), report.baseline_run_ids().end());
  out.candidate_image_digest = report.candidate_image_digest();
  out.baseline_image_digests.assign(report.baseline_image_digests().begin(), report.baseline_image_digests().end());
  out.fdr = report.fdr();
  gate::GateResult& result = out.result;
  result.mode = report.mode() == v1::GATE_MODE_AB ? gate::Mode::kAb : gate::Mode::kHistory;
  for (int i = 0; i < report.verdicts_size(); ++i) {
    auto v = MetricFromProto(report.verdicts(i), absl::StrCat("verdicts[", i, "]"));
    PERFGATE_RETURN_IF_ERROR(v);
    result.verdicts.push_back(*std::move(v));
  }
  result.outcome = OutcomeFromProto(report.outcome(), result.verdicts);
  result.summary = report.summary();
  result.invalid_reasons.assign(report.invalid_reasons().begin(), report.invalid_reasons().end());
  PERFGATE_RETURN_IF_ERROR(CaseRoundsFromProto(report, &out));
  return out;
}

std::string GateReportJson(const gate::GateReport& report) {
  v1::GateReport message;
  ToProto(report, &message);
  return ToApiJson(message, /*indented=*/true);
}

absl::StatusOr<gate::GateReport> GateReportFromJson(std::string_view text, std::string_view what) {
  v1::GateReport message;
  PERFGATE_RETURN_IF_ERROR(FromApiJson(text, &message, what));
  auto report = FromProto(message);
  if (!report.ok()) return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": ", std::string(report.status().message())));
  return report;
}

}  // namespace perfgate::wire
