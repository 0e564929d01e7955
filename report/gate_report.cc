#include "report/gate_report.h"

#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/exit_codes.h"
#include "report/report_text.h"

namespace perfgate::report {

std::string VerdictName(gate::Verdict verdict) { return gate::ToString(verdict); }

absl::Status WriteReportFiles(const gate::GateReport& report, const std::string& markdown_file,
                              const std::string& junit_file, const std::string& json_file) {
  const std::pair<const std::string*, GateReportRenderer> files[] = {
      {&markdown_file, RenderMarkdown}, {&junit_file, RenderJUnit}, {&json_file, RenderJson}};
  for (const auto& [path, render] : files) {
    if (path->empty()) continue;
    std::ofstream out(*path);
    out << render(report);
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
