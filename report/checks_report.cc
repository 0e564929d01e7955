// The gate report as a GitHub Checks API payload (RenderChecksJson): the
// conclusion from the outcome, the short comment as the summary and the
// full Markdown as the text.
#include <nlohmann/json.hpp>

#include "report/gate_report.h"
#include "report/report_text.h"

namespace perfgate::report {
namespace {

// GitHub refuses an output field longer than this.
constexpr size_t kMaxOutput = 65535;

std::string Cut(std::string text) {
  if (text.size() <= kMaxOutput) return text;
  const std::string tail = "\n\n…(cut)";
  text.resize(kMaxOutput - tail.size());
  // Not in the middle of a UTF-8 sequence.
  while (!text.empty() && (static_cast<unsigned char>(text.back()) & 0xC0) == 0x80) text.pop_back();
  if (!text.empty() && (static_cast<unsigned char>(text.back()) & 0x80) != 0) text.pop_back();
  return text + tail;
}

}  // namespace

std::string RenderChecksJson(const gate::GateReport& report, const std::string& report_url) {
  nlohmann::ordered_json out = {
      {"name", "perfgate"},
      {"head_sha", report.candidate_commit},
      {"status", "completed"},
      {"conclusion", IsRegression(report) ? "failure" : IsInconclusive(report) ? "neutral" : "success"}};
  if (!report_url.empty()) out["details_url"] = report_url;
  if (report.report_id > 0) out["external_id"] = std::to_string(report.report_id);
  out["output"] = {{"title", Cut(VerdictLine(report))},
                   {"summary", Cut(RenderPrComment(report, report_url))},
                   {"text", Cut(RenderMarkdown(report))}};
  return out.dump(2) + "\n";
}

}  // namespace perfgate::report
