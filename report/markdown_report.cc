// The gate report as GitHub-flavoured Markdown for a pull-request comment
// (RenderMarkdown).
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/escape.h"
#include "report/gate_report.h"
#include "report/report_text.h"

namespace perfgate::report {

using gate::MetricVerdict;

namespace {

std::string MarkdownTable(const Row& header, const std::vector<Row>& rows) {
  std::string out = "|";
  for (const std::string& h : header) absl::StrAppend(&out, " ", h, " |");
  out += "\n|";
  for (size_t i = 0; i < header.size(); ++i) out += RightAligned(i) ? "---:|" : "---|";
  out += "\n";
  for (const Row& row : rows) {
    out += "|";
    for (const std::string& cell : row) absl::StrAppend(&out, " ", EscapeMarkdown(cell), " |");
    out += "\n";
  }
  return out;
}

}  // namespace

std::string RenderMarkdown(const gate::GateReport& report) {
  std::string line = VerdictLine(report);
  // The status word leads in bold; everything after it comes from the report
  // and is escaped.
  const size_t dash = line.find(" \u2014 ");
  std::string out =
      absl::StrCat("**perfgate gate: ", line.substr(0, dash), "**",
                   dash == std::string::npos ? "" : EscapeMarkdown(line.substr(dash)), "\n\n",
                   EscapeMarkdown(absl::StrCat("Candidate ", HeaderLine(report), ".")), "\n");
  if (!report.result.summary.empty()) {
    absl::StrAppend(&out, "\n", EscapeMarkdown(report.result.summary), "\n");
  }

  std::vector<Row> failed;
  for (const MetricVerdict& v : report.result.verdicts) {
    if (!IsFailure(v.verdict)) continue;
    Row row = Cells(v);
    row.push_back(v.note);
    failed.push_back(std::move(row));
  }
  if (!report.result.invalid_reasons.empty()) {
    out += "\nThe environment was unfit for gating, so the numbers below say little about the code:\n\n";
    for (const std::string& r : report.result.invalid_reasons) {
      absl::StrAppend(&out, "- ", EscapeMarkdown(r), "\n");
    }
  }
  if (failed.empty()) {
    out += "\nNo metric regressed.\n";
  } else {
    Row header = kColumns;
    header.push_back("note");
    absl::StrAppend(&out, "\n", MarkdownTable(header, failed));
  }

  std::vector<Row> all;
  for (const MetricVerdict& v : report.result.verdicts) all.push_back(Cells(v));
  const size_t total = report.result.verdicts.size();
  // GitHub renders Markdown inside <details> only after a blank line.
  absl::StrAppend(&out, "\n<details><summary>All ", total, total == 1 ? " metric" : " metrics",
                  "</summary>\n\n", MarkdownTable(kColumns, all));
  if (const std::string legend = AdvisoryLegend(report); !legend.empty()) {
    absl::StrAppend(&out, "\n", EscapeMarkdown(legend), "\n");
  }
  out += "\n</details>\n";
  return out;
}

}  // namespace perfgate::report
