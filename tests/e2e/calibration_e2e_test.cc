// A node's noise floor end to end over real processes: a private PostgreSQL,
// the coordinator binary, `perfgate-agent calibrate` measuring A/A processes
// and storing the spread, `perfgate calibrations` listing it, and a history
// gate of one baseline run against one candidate run judged with it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "gate/report.h"
#include "tests/support/coordinator.h"
#include "tests/support/gate_reports.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::calibration_e2e_test {
namespace {

using testing::Bin;
using testing::ChildProcess;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

// The sgemm cases of one shape: quick, compute-bound, and what the
// injected slowdown below targets.
constexpr char kFilter[] = "kernels/sgemm{k=512,m=512,*";

// The calibrated spread is whatever this machine gives: three processes of
// 0.05 s on a shared CI machine scatter by up to tens of percent, and their
// spread has two degrees of freedom, so the t test's quantiles are wide.
// The tolerance, the false-discovery rate and the injected slowdown (ten
// times the time) are set so that even a spread of 80 % cannot hide the
// slowed case: this test checks the path, the simulation the power.
constexpr char kPolicy[] = R"(version: 1
defaults:
  tolerance: 25%
  fdr: 20%
)";

class CalibrationEndToEnd : public testing::PostgresDirTest {
 protected:
  void SetUp() override {
    testing::PostgresDirTest::SetUp();
    if (HasFatalFailure()) return;
    policy_ = dir_->Join("policy.yaml");
    std::ofstream(policy_) << kPolicy;
    auto started = testing::StartCoordinator(ConnInfo(), dir_->Join("coordinator.log"));
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(started->process);
    address_ = started->address;
  }

  // Runs a command; prints its output so that a failing test shows it.
  CommandResult Run(const std::vector<std::string>& argv) {
    auto r = RunCommand(argv, {}, std::chrono::minutes(3));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    std::cout << "--- " << argv[0] << " " << argv[1] << " ---\n" << r->output;
    if (r->exit_code != 0) r->output += "\n--- coordinator log ---\n" + coordinator_->OutputTail();
    return *r;
  }

  // One `perfgate-agent run` of the sgemm cases; returns its run id.
  std::string AgentRun(const std::string& branch, const std::vector<std::string>& extra) {
    const std::string id_file = dir_->Join("run-id-" + branch);
    std::vector<std::string> argv = {Bin("agent/perfgate-agent"), "run", "--coordinator", address_,
                                     "--branch", branch, "--commit", branch + "-commit",
                                     "--filter", kFilter, "--set", "k=512", "--min-time", "0.3",
                                     "--timeout", "1.5", "--run-id-file", id_file,
                                     "--spool", dir_->Join("spool")};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const CommandResult r = Run(argv);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::string run_id;
    std::getline(std::ifstream(id_file), run_id);
    return run_id;
  }

  std::string policy_;
  std::unique_ptr<ChildProcess> coordinator_;
  std::string address_;
};

TEST_F(CalibrationEndToEnd, ACalibratedNodeJudgesOneRunAgainstOneAndCatchesAnInjectedSlowdown) {
  const std::string file = dir_->Join("calibration.json");
  const CommandResult cal =
      Run({Bin("agent/perfgate-agent"), "calibrate", "--coordinator", address_, "--processes", "3",
           "--block-time", "0.05", "--filter", kFilter, "--set", "k=512", "--policy", policy_,
           "--output", file});
  ASSERT_EQ(cal.exit_code, 0) << cal.output;
  EXPECT_NE(cal.output.find("calibration stored on"), std::string::npos) << cal.output;
  auto written = testing::ReadFile(file);
  ASSERT_TRUE(written.ok()) << written.status();
  const nlohmann::json cal_json = nlohmann::json::parse(*written);
  EXPECT_EQ(cal_json.at("format"), "perfgate-calibration");
  ASSERT_FALSE(cal_json.at("entries").empty());
  for (const auto& e : cal_json.at("entries")) EXPECT_EQ(e.at("processes"), 3) << e.dump();

  const CommandResult listed =
      Run({Bin("cli/perfgate"), "--coordinator", address_, "calibrations", "--policy", policy_});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("node " + cal_json.at("node").get<std::string>()), std::string::npos)
      << listed.output;
  EXPECT_NE(listed.output.find("kernels/sgemm{k=512,m=512,"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find(", 0 stale;"), std::string::npos) << listed.output;

  AgentRun("main", {});
  // Two runs of the candidate's commit: a history gate does not fail a case
  // on one run (a neighbour could have slowed it), and judges both.
  ASSERT_FALSE(AgentRun("pr-1", {"--inject-slowdown", "kernels/sgemm{k=512,*=900"}).empty());
  const std::string candidate = AgentRun("pr-1", {"--inject-slowdown", "kernels/sgemm{k=512,*=900"});
  ASSERT_FALSE(candidate.empty());
  const std::string json_path = dir_->Join("gate.json");
  const CommandResult gate = Run({Bin("cli/perfgate"), "--coordinator", address_, "gate", "--run", candidate,
                                  "--baseline-branch", "main", "--policy", policy_, "--json", json_path});
  EXPECT_EQ(gate.exit_code, 1) << gate.output;
  auto report = testing::ReadGateReport(json_path);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_FALSE(report->result.verdicts.empty()) << gate.output;
  for (const gate::MetricVerdict& v : report->result.verdicts) {
    const std::string what = v.benchmark + " " + v.metric + " (" + gate::ToString(v.verdict) + ", " +
                             gate::ToString(v.method) + "): " + v.note;
    // One baseline run: only the calibration can show how far runs move.
    EXPECT_EQ(v.method, gate::Method::kCalibrated) << what;
    EXPECT_EQ(v.baseline_runs, 1u) << what;
    if (v.benchmark.rfind("kernels/sgemm{k=512,m=512,", 0) == 0) {
      EXPECT_EQ(v.verdict, gate::Verdict::kRegression) << what;
    }
  }
}

}  // namespace
}  // namespace perfgate::calibration_e2e_test
