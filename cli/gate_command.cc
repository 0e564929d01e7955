// `perfgate gate` and `perfgate report`: a gate the coordinator evaluates,
// or one it stored, shown as a table with the report files the flags ask for
// (and, for a pull request, a job summary, a comment and a check run).
#include <iostream>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "wire/gate_convert.h"
#include "report/gate_report.h"

namespace perfgate::cli {
namespace {

// Shows a report the coordinator sent: the table, after a gate where it is
// stored, the report files; returns the gate's exit code.
int ShowReport(const v1::GateReport& sent, const Config& c, const char* call, bool announce) {
  auto report = wire::FromProto(sent);
  if (!report.ok()) return BadAnswer(report.status(), call);
  std::cout << report::RenderTable(*report);
  if (announce && report->report_id > 0) {
    std::cout << "report " << report->report_id << " stored; `perfgate report "
              << report->report_id << "` shows it again\n";
  }
  absl::Status written = report::WriteReportFiles(*report, c.markdown_file, c.junit_file, c.json_file,
                                                         wire::GateReportJson);
  if (written.ok()) written = report::WritePullRequestFiles(*report, c.pr);
  if (!written.ok()) {
    std::cerr << "perfgate: " << written.message() << "\n";
    return kExitError;
  }
  return report::ExitCode(*report);
}

}  // namespace

int GateCommand(const Config& c) {
  v1::EvaluateRequest req;
  req.set_candidate_run_id(c.run_id);
  if (c.mode == gate::Mode::kAb) {
    req.set_mode(v1::GATE_MODE_AB);
    req.set_baseline_run_id(c.baseline_run_id);
  } else {
    req.set_mode(v1::GATE_MODE_HISTORY);
  }
  req.set_baseline_branch(c.baseline_branch);
  req.set_baseline_commit(c.baseline_commit);
  req.set_policy_yaml(c.policy.text);
  req.set_policy_name(c.policy_file);
  client::CoordinatorClient coordinator(CoordinatorOptions(c));
  auto report = coordinator.Evaluate(req);
  if (!report.ok()) return RpcError(report.status(), "gate", c.coordinator);
  return ShowReport(*report, c, "gate", /*announce=*/true);
}

int ReportCommand(const Config& c) {
  client::CoordinatorClient coordinator(CoordinatorOptions(c));
  auto report = coordinator.GetReport(c.report_id);
  if (!report.ok()) return RpcError(report.status(), "report", c.coordinator);
  return ShowReport(*report, c, "report", /*announce=*/false);
}

}  // namespace perfgate::cli
