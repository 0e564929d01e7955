#include "proto/gate_convert.h"

#include "proto/convert.h"

namespace perfgate::wire {

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
  }
  return v1::VERDICT_UNSPECIFIED;
}

v1::TestMethod ToProto(gate::Method m) {
  switch (m) {
    case gate::Method::kNone: return v1::TEST_METHOD_NONE;
    case gate::Method::kBlocks: return v1::TEST_METHOD_BLOCKS;
    case gate::Method::kHistory: return v1::TEST_METHOD_HISTORY;
    case gate::Method::kCalibrated: return v1::TEST_METHOD_CALIBRATED;
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

}  // namespace perfgate::wire
