// Report writers for a gate: one gate::GateReport (from the coordinator,
// the agent's `ab` or the offline `perfgate compare`), rendered for a
// terminal, a pull-request comment, a CI test view (JUnit) or a program
// (JSON), one file per format (table_report.cc, markdown_report.cc,
// junit_report.cc, json_report.cc), each a GateReportRenderer. They only format: every number and verdict comes from the report,
// in the order the gate sorted it (worst first).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "gate/gate.h"
#include "gate/report.h"

namespace perfgate::report {

/// A format of a gate report: the whole report as the text of one file.
using GateReportRenderer = std::string (*)(const gate::GateReport& report);

/// A fixed-width table for a terminal: a header naming the candidate run,
/// SKU, baseline branch and number of baseline runs; one row per verdict
/// (benchmark, metric, baseline, candidate, change %, tolerance %, verdict;
/// advisory metrics marked); and a final "perfgate gate: PASS|REGRESSION — ..."
/// line. Ends with a newline.
std::string RenderTable(const gate::GateReport& report);

/// GitHub-flavoured Markdown for a pull-request comment: a bold status word
/// and summary line, a table of the metrics that regressed, then the full
/// table inside <details>. Text from the report is escaped.
std::string RenderMarkdown(const gate::GateReport& report);

/// JUnit XML: one <testsuite name="perfgate gate"> with a <testcase> per
/// verdict; gating regressions, misses of a floor and missing metrics are
/// <failure>s, metrics without a baseline are <skipped/>. Everything from the
/// report is XML-escaped.
std::string RenderJUnit(const gate::GateReport& report);

/// The report as a JSON object (pretty-printed); NaN and infinite numbers
/// become null, enums their lower-case names.
std::string RenderJson(const gate::GateReport& report);

/// The process exit code for the report (common/exit_codes.h): kExitPass,
/// kExitRegression (a regression, a floor missed, a metric missing, or
/// undecided metrics the policy fails), kExitInconclusive (a gating metric
/// too noisy, without baseline, or measured in an unfit environment, and the
/// policy reports it).
int ExitCode(const gate::GateReport& report);

/// Writes the report as Markdown, JUnit XML and JSON to each of the paths
/// that is set (an empty path is skipped). The error names the file that
/// could not be written.
absl::Status WriteReportFiles(const gate::GateReport& report, const std::string& markdown_file,
                              const std::string& junit_file, const std::string& json_file);

/// Lower-case verdict name as the gate uses it ("below_floor").
std::string VerdictName(gate::Verdict verdict);

}  // namespace perfgate::report
