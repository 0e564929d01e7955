// The gate report as a fixed-width table for a terminal (RenderTable).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "report/gate_report.h"
#include "report/report_text.h"

namespace perfgate::report {

using gate::MetricVerdict;

std::string RenderTable(const gate::GateReport& report) { return RenderTable(report, "perfgate gate"); }

std::string RenderTable(const gate::GateReport& report, const std::string& command) {
  std::vector<Row> rows;
  rows.reserve(report.result.verdicts.size());
  for (const MetricVerdict& v : report.result.verdicts) rows.push_back(Cells(v));
  std::vector<size_t> widths(kColumns.size());
  for (size_t i = 0; i < kColumns.size(); ++i) widths[i] = Width(kColumns[i]);
  for (const Row& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], Width(row[i]));
  }
  auto format_row = [&](const Row& row) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(widths[i] - Width(row[i]), ' ');
      if (i > 0) line += "  ";
      // The last column is not padded, so lines carry no trailing blanks.
      if (RightAligned(i)) {
        absl::StrAppend(&line, pad, row[i]);
      } else {
        absl::StrAppend(&line, row[i], i + 1 < row.size() ? pad : "");
      }
    }
    return line + "\n";
  };

  std::string out = absl::StrCat(command, ": candidate ", HeaderLine(report), "\n\n");
  if (rows.empty()) {
    out += "(no metrics in the candidate or the baseline)\n";
  } else {
    out += format_row(kColumns);
    for (const Row& row : rows) out += format_row(row);
    if (const std::string legend = AdvisoryLegend(report); !legend.empty()) absl::StrAppend(&out, legend, "\n");
  }
  // What to do about each failure is in its note; the table has no room for it.
  bool first_note = true;
  for (const MetricVerdict& v : report.result.verdicts) {
    if (!(IsFailure(v.verdict) || (v.gating && IsUndecided(v.verdict))) || v.note.empty()) {
      continue;
    }
    if (first_note) out += "\n";
    first_note = false;
    absl::StrAppend(&out, "  ", v.benchmark, " ", v.metric, ": ", v.note, "\n");
  }
  if (!report.result.invalid_reasons.empty()) {
    out += "\nEnvironment unfit for gating:\n";
    for (const std::string& r : report.result.invalid_reasons) absl::StrAppend(&out, "  - ", r, "\n");
  }
  absl::StrAppend(&out, "\n", command, ": ", VerdictLine(report), "\n");
  return out;
}

}  // namespace perfgate::report
