// Report writers for a gate: one gate::GateReport (from the coordinator,
// the agent's `ab` or the offline `perfgate compare`), rendered for a
// terminal, a pull-request comment or a CI test view (JUnit), one file per
// format (table_report.cc, markdown_report.cc, junit_report.cc), each a
// GateReportRenderer (a program's JSON is the schema's, wire/gate_convert.h); for a pull
// request, a comment and a GitHub Checks payload that link to the stored
// report (pr_comment_report.cc, checks_report.cc). They only format: every number and verdict comes from the report,
// in the order the gate sorted it (worst first).
#pragma once

#include <string>
#include <vector>

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

/// RenderTable with `command` in place of "perfgate gate" in the header and
/// the verdict line ("perfgate compare", "perfgate-agent ab"), so the
/// verdict names the command that gave it.
std::string RenderTable(const gate::GateReport& report, const std::string& command);

/// GitHub-flavoured Markdown for a pull-request comment: a bold status word
/// and summary line, a table of the metrics that regressed, then the full
/// table inside <details>. Text from the report is escaped.
std::string RenderMarkdown(const gate::GateReport& report);

/// JUnit XML: one <testsuite name="perfgate gate"> with a <testcase> per
/// verdict; gating regressions, misses of a floor and missing metrics are
/// <failure>s, metrics without a baseline are <skipped/>. Everything from the
/// report is XML-escaped.
std::string RenderJUnit(const gate::GateReport& report);


/// The process exit code for the report (common/exit_codes.h): kExitPass,
/// kExitRegression (a regression, a floor missed, a metric missing, or
/// undecided metrics the policy fails), kExitInconclusive (a gating metric
/// too noisy, without baseline, or measured in an unfit environment, and the
/// policy reports it).
int ExitCode(const gate::GateReport& report);

/// Writes the report as Markdown, JUnit XML and JSON to each of the paths
/// that is set (an empty path is skipped). The JSON is the schema's
/// (v1::GateReport), which report/ does not link: `render_json` is
/// wire::GateReportJson. The error names the file that could not be written.
absl::Status WriteReportFiles(const gate::GateReport& report, const std::string& markdown_file,
                              const std::string& junit_file, const std::string& json_file,
                              GateReportRenderer render_json);

/// A format of a gate report that links to where a person sees it whole
/// (`report_url`; "" when there is no such page).
using LinkedReportRenderer = std::string (*)(const gate::GateReport& report, const std::string& report_url);

/// A pull-request comment, shortened to what a reviewer acts on: a bold
/// status line, the gating metrics that regressed, those that are
/// unconfirmed (one run would regress; another run of the commit decides),
/// a count of the others that could not be judged, and the link (or the
/// `perfgate report ID` command). Starts with kPrCommentMarker, so a CI job
/// can find and edit its earlier comment. pr_comment_report.cc.
std::string RenderPrComment(const gate::GateReport& report, const std::string& report_url);
/// The HTML comment a pull-request comment begins with.
inline constexpr char kPrCommentMarker[] = "<!-- perfgate-gate -->";

/// A GitHub Checks API payload (POST /repos/{owner}/{repo}/check-runs):
/// name "perfgate", head_sha the candidate commit, status completed,
/// conclusion success, failure or neutral (inconclusive), details_url the
/// link, output's title the verdict line, summary the pull-request comment
/// and text the full Markdown, each cut to GitHub's 65535 characters.
/// checks_report.cc.
std::string RenderChecksJson(const gate::GateReport& report, const std::string& report_url);

/// Where the pull-request renderings go; an empty path is skipped.
struct PullRequestFiles {
  std::string summary_file;   // the Markdown and link, appended (GitHub's $GITHUB_STEP_SUMMARY)
  std::string comment_file;   // RenderPrComment
  std::string checks_file;    // RenderChecksJson
  std::string dashboard_url;  // the dashboard's base URL; "" : no link
};
/// The stored report's page on the dashboard: "<base>/#/report/<id>"; ""
/// when there is no base or the report was not stored.
std::string ReportUrl(const gate::GateReport& report, const std::string& dashboard_url);
/// Writes the files of `files` that are set; the error names the file.
absl::Status WritePullRequestFiles(const gate::GateReport& report, const PullRequestFiles& files);

/// Lower-case verdict name as the gate uses it ("below_floor").
std::string VerdictName(gate::Verdict verdict);

}  // namespace perfgate::report
