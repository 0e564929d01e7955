#include "report/gate_report.h"

#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/exit_codes.h"
#include "report/report_text.h"

namespace perfgate::report {

std::string VerdictName(gate::Verdict verdict) { return gate::ToString(verdict); }

absl::Status WriteReportFiles(const gate::GateReport& report, const std::string& markdown_file,
                              const std::string& junit_file, const std::string& json_file,
                              GateReportRenderer render_json) {
  const std::pair<const std::string*, GateReportRenderer> files[] = {
      {&markdown_file, RenderMarkdown}, {&junit_file, RenderJUnit}, {&json_file, render_json}};
  for (const auto& [path, render] : files) {
    if (path->empty()) continue;
    std::ofstream out(*path);
    out << render(report);
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write the report to ", *path));
  }
  return absl::OkStatus();
}

std::string ReportUrl(const gate::GateReport& report, const std::string& dashboard_url) {
  if (dashboard_url.empty() || report.report_id <= 0) return "";
  std::string base = dashboard_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return absl::StrCat(base, "/#/report/", report.report_id);
}

absl::Status WritePullRequestFiles(const gate::GateReport& report, const PullRequestFiles& files) {
  const std::string url = ReportUrl(report, files.dashboard_url);
  if (!files.summary_file.empty()) {
    // GitHub's job summary is one file that every step appends to.
    std::ofstream out(files.summary_file, std::ios::app);
    out << RenderMarkdown(report) << (url.empty() ? "" : absl::StrCat("\n[Full report](", url, ")\n")) << "\n";
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot append the job summary to ", files.summary_file));
  }
  const std::pair<const std::string*, LinkedReportRenderer> linked[] = {
      {&files.comment_file, RenderPrComment}, {&files.checks_file, RenderChecksJson}};
  for (const auto& [path, render] : linked) {
    if (path->empty()) continue;
    std::ofstream out(*path);
    out << render(report, url);
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write the report to ", *path));
  }
  return absl::OkStatus();
}

int ExitCode(const gate::GateReport& report) {
  if (IsRegression(report)) return kExitRegression;
  return IsInconclusive(report) ? kExitInconclusive : kExitPass;
}

}  // namespace perfgate::report
