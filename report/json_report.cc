// The gate report as a JSON object for a program (RenderJson), and the
// readers of what a program needs back from one (VerdictsInJson, RoundsInJson).
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/gate_report.h"
#include "common/json_number.h"
#include "report/report_text.h"

namespace perfgate::report {

using gate::MetricVerdict;

namespace {

nlohmann::ordered_json JsonNumber(double value) { return NumberOrNull<nlohmann::ordered_json>(value); }

// The keys read back (VerdictsInJson, RoundsInJson), written and read here alone.
constexpr const char* kVerdicts = "verdicts";
constexpr const char* kBenchmark = "benchmark";
constexpr const char* kMetric = "metric";
constexpr const char* kChange = "change";
constexpr const char* kChangeCi = "change_ci";
constexpr const char* kPValue = "p_value";
constexpr const char* kNote = "note";
constexpr const char* kCases = "cases";
constexpr const char* kRounds = "rounds";
constexpr const char* kStopped = "stopped";

// A number written by JsonNumber; NaN for null or anything else.
double NumberIn(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : MetricVerdict::kNaN;
}

std::string TextIn(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::string RenderJson(const gate::GateReport& report) {
  nlohmann::ordered_json verdicts = nlohmann::ordered_json::array();
  for (const MetricVerdict& v : report.result.verdicts) {
    verdicts.push_back({
        {kBenchmark, v.benchmark},
        {kMetric, v.metric},
        {"unit", v.unit},
        {"direction", perfgate::ToString(v.direction)},
        {"baseline_median", JsonNumber(v.baseline_median)},
        {"candidate_median", JsonNumber(v.candidate_median)},
        {kChange, JsonNumber(v.change)},
        {kChangeCi, {JsonNumber(v.change_ci_low), JsonNumber(v.change_ci_high)}},
        {kPValue, JsonNumber(v.p_value)},
        {"p_adjusted", JsonNumber(v.p_adjusted)},
        {"method", gate::ToString(v.method)},
        {"candidate_noise", JsonNumber(v.candidate_noise)},
        {"baseline_samples", v.baseline_samples},
        {"tolerance", JsonNumber(v.tolerance)},
        {"floor", JsonNumber(v.floor)},
        {"verdict", VerdictName(v.verdict)},
        {"gating", v.gating},
        {"candidate_samples", v.candidate_samples},
        {"baseline_runs", v.baseline_runs},
        {kNote, v.note},
    });
  }
  nlohmann::ordered_json out = {
      {"report_id", report.report_id},
      {"candidate_run_id", report.candidate_run_id},
      {"sku", report.sku},
      {"candidate_branch", report.candidate_branch},
      {"candidate_commit", report.candidate_commit},
      {"baseline_branch", report.baseline_branch},
      {"baseline_run_ids", report.baseline_run_ids},
      {"candidate_image_digest", report.candidate_image_digest},
      {"baseline_image_digests", report.baseline_image_digests},
      {"mode", ModeName(report)},
      {"fdr", JsonNumber(report.fdr)},
      {"outcome", OutcomeName(report)},
      {"summary", report.result.summary},
      {"invalid_reasons", report.result.invalid_reasons},
      {kVerdicts, std::move(verdicts)},
  };
  if (!report.case_rounds.empty()) {
    nlohmann::ordered_json cases = nlohmann::ordered_json::array();
    for (const gate::CaseRounds& c : report.case_rounds) {
      cases.push_back({{kBenchmark, c.benchmark}, {kRounds, c.rounds}, {kStopped, c.stopped}});
    }
    out[kCases] = std::move(cases);
  }
  // Strings from the wire or a result file should be UTF-8; replace rather than throw if not.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::optional<std::vector<MetricVerdict>> VerdictsInJson(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains(kVerdicts) || !report[kVerdicts].is_array()) return std::nullopt;
  std::vector<MetricVerdict> out;
  for (const nlohmann::json& j : report[kVerdicts]) {
    if (!j.is_object()) continue;
    MetricVerdict& v = out.emplace_back();
    v.benchmark = TextIn(j, kBenchmark);
    v.metric = TextIn(j, kMetric);
    v.change = NumberIn(j, kChange);
    const nlohmann::json ci = j.value(kChangeCi, nlohmann::json::array());
    if (ci.is_array() && ci.size() == 2) {
      v.change_ci_low = ci[0].is_number() ? ci[0].get<double>() : MetricVerdict::kNaN;
      v.change_ci_high = ci[1].is_number() ? ci[1].get<double>() : MetricVerdict::kNaN;
    }
    v.p_value = NumberIn(j, kPValue);
    v.note = TextIn(j, kNote);
  }
  return out;
}

std::optional<unsigned> RoundsInJson(const nlohmann::json& report, const std::string& benchmark) {
  if (!report.is_object() || !report.contains(kCases) || !report[kCases].is_array()) return std::nullopt;
  for (const nlohmann::json& c : report[kCases]) {
    if (!c.is_object() || c.value(kBenchmark, "") != benchmark) continue;
    const auto rounds = c.find(kRounds);
    if (rounds == c.end() || !rounds->is_number_unsigned()) return std::nullopt;
    return rounds->get<unsigned>();
  }
  return std::nullopt;
}

}  // namespace perfgate::report
