// The pull-request CI scripts of deploy/ci against recorded inputs
// (tests/data/ci: Google Benchmark files of five runs of main at the merge
// base and of two candidates) over real processes: a private PostgreSQL, the coordinator
// binary, `perfgate ingest` as the measuring command and `perfgate gate`.
// A slowed candidate is unconfirmed after one measurement, measured once
// more by the script, and fails with a comment, a check payload, JUnit and a
// job summary; a clean one passes. The posting script calls the GitHub CLI
// (a recording stand-in here: nothing needs the network) with those files;
// the workflow and the GitLab job parse as YAML and run the scripts.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::ci_e2e_test {
namespace {

using nlohmann::json;
using testing::Bin;
using testing::CommandResult;
using testing::ReadFile;
using testing::RunCommand;

const std::string kSource = PERFGATE_SOURCE_DIR;
const std::string kData = kSource + "/tests/data/ci";

class CiEndToEnd : public testing::PostgresDirTest {
 protected:
  void SetUp() override {
    PostgresDirTest::SetUp();
    if (HasFatalFailure()) return;
    auto started = testing::StartCoordinator(ConnInfo(), dir_->Join("coordinator.log"));
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(started->process);
    address_ = started->address;
    for (int i = 1; i <= 5; ++i) {
      auto r = RunCommand(Ingest(kData + "/main-" + std::to_string(i) + ".json", "main", "base5"));
      ASSERT_TRUE(r.ok()) << r.status();
      ASSERT_EQ(r->exit_code, 0) << r->output;
    }
  }

  std::vector<std::string> Ingest(const std::string& file, const std::string& branch, const std::string& commit) {
    return {Bin("cli/perfgate"), "ingest", file, "--coordinator", address_, "--branch", branch,
            "--commit", commit, "--sku", "cpu-recorded"};
  }

  // deploy/ci/perfgate-pr.sh with `perfgate ingest FILE` measuring commit `commit`.
  CommandResult PrScript(const std::string& out, const std::string& file, const std::string& commit) {
    std::vector<std::string> argv = {kSource + "/deploy/ci/perfgate-pr.sh", out, "--"};
    for (const std::string& a : Ingest(file, "feature", commit)) argv.push_back(a);
    testing::ProcessOptions o;
    o.env = {{"PERFGATE_COORDINATOR", address_},
             {"PERFGATE_POLICY", kData + "/policy.yaml"},
             {"PERFGATE_BASELINE_COMMIT", "base5"},
             {"PERFGATE_DASHBOARD_URL", "https://perf.example.com"},
             {"PERFGATE", Bin("cli/perfgate")},
             {"GITHUB_STEP_SUMMARY", dir_->Join("step-summary.md")}};
    auto r = RunCommand(argv, o, std::chrono::minutes(3));
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  std::unique_ptr<testing::ChildProcess> coordinator_;
  std::string address_;
};

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(CiEndToEnd, SlowCandidateIsConfirmedOnceAndFailsWithCommentCheckAndJUnit) {
  const std::string out = dir_->Join("slow");
  const CommandResult r = PrScript(out, kData + "/candidate-slow.json", "cand1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // One measurement, an unconfirmed regression, one more measurement.
  EXPECT_EQ(Count(r.output, "run_id: "), 2) << r.output;
  EXPECT_NE(r.output.find("measuring this commit once more"), std::string::npos) << r.output;

  const std::string comment = ReadFile(out + "/comment.md").value_or("");
  EXPECT_NE(comment.find("**perfgate: REGRESSION**"), std::string::npos) << comment;
  EXPECT_NE(comment.find("**Regressed**"), std::string::npos) << comment;
  EXPECT_NE(comment.find("| gbench/BM\\_Work{a0=1024} | real\\_time |"), std::string::npos) << comment;
  EXPECT_EQ(comment.find("BM\\_Other"), std::string::npos) << comment;
  EXPECT_NE(comment.find("](https://perf.example.com/#/report/"), std::string::npos) << comment;

  const json checks = json::parse(ReadFile(out + "/checks.json").value_or("{}"));
  EXPECT_EQ(checks.value("conclusion", ""), "failure");
  EXPECT_EQ(checks.value("head_sha", ""), "cand1");
  EXPECT_EQ(checks["output"].value("summary", ""), comment);
  EXPECT_NE(ReadFile(out + "/junit.xml").value_or("").find("<failure"), std::string::npos);
  // The job summary holds the final gate alone, appended once.
  const std::string summary = ReadFile(dir_->Join("step-summary.md")).value_or("");
  EXPECT_EQ(Count(summary, "**perfgate gate: "), 1) << summary;
  EXPECT_NE(summary.find("REGRESSION"), std::string::npos) << summary;

  // Posting: the GitHub CLI is given the comment and the check payload.
  const std::string gh = dir_->Join("gh");
  {
    std::ofstream script(gh);
    script << "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >> \"$GH_LOG\"; echo --- >> \"$GH_LOG\"\n"
              "case \" $* \" in *\" --edit-last \"*) exit 1;; esac\n";
  }
  ASSERT_EQ(::chmod(gh.c_str(), 0755), 0);
  testing::ProcessOptions o;
  o.env = {{"GH", gh}, {"GH_LOG", dir_->Join("gh.log")}, {"GITHUB_REPOSITORY", "acme/kernels"}};
  auto posted = RunCommand({kSource + "/deploy/ci/post-github.sh", out, "12"}, o);
  ASSERT_TRUE(posted.ok()) << posted.status();
  EXPECT_EQ(posted->exit_code, 0) << posted->output;
  const std::string calls = ReadFile(dir_->Join("gh.log")).value_or("");
  EXPECT_EQ(calls,
            "pr\ncomment\n12\n--repo\nacme/kernels\n--edit-last\n--body-file\n" + out + "/comment.md\n---\n"
            "pr\ncomment\n12\n--repo\nacme/kernels\n--body-file\n" + out + "/comment.md\n---\n"
            "api\n--method\nPOST\nrepos/acme/kernels/check-runs\n--input\n" + out + "/checks.json\n---\n");
}

TEST_F(CiEndToEnd, CleanCandidatePassesWithOneMeasurement) {
  const std::string out = dir_->Join("clean");
  const CommandResult r = PrScript(out, kData + "/candidate-clean.json", "cand2");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(Count(r.output, "run_id: "), 1) << r.output;
  const std::string comment = ReadFile(out + "/comment.md").value_or("");
  EXPECT_NE(comment.find("**perfgate: PASS**"), std::string::npos) << comment;
  EXPECT_NE(comment.find("No gating metric regressed."), std::string::npos) << comment;
  EXPECT_EQ(json::parse(ReadFile(out + "/checks.json").value_or("{}")).value("conclusion", ""), "success");
  // A measuring command that fails ends the script with 2 and says so.
  auto bad = RunCommand({kSource + "/deploy/ci/perfgate-pr.sh", out, "--", "false"},
                        {.env = {{"PERFGATE_COORDINATOR", address_}, {"PERFGATE_POLICY", "p"},
                                 {"PERFGATE_BASELINE_COMMIT", "base5"}}});
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 2) << bad->output;
  EXPECT_NE(bad->output.find("the measuring command failed"), std::string::npos) << bad->output;
}

TEST(CiFiles, WorkflowAndGitLabJobParseAndRunTheScripts) {
  const YAML::Node gh = YAML::LoadFile(kSource + "/deploy/ci/github-workflow.yml");
  ASSERT_TRUE(gh["jobs"]["gate"]["steps"].IsSequence());
  EXPECT_EQ(gh["permissions"]["checks"].as<std::string>(), "write");
  std::string runs;
  for (const YAML::Node& step : gh["jobs"]["gate"]["steps"]) {
    if (step["run"]) runs += step["run"].as<std::string>() + "\n";
  }
  EXPECT_NE(runs.find("deploy/ci/perfgate-pr.sh perfgate-out -- perfgate-agent run"), std::string::npos) << runs;
  EXPECT_NE(runs.find("deploy/ci/post-github.sh perfgate-out"), std::string::npos) << runs;

  const YAML::Node gl = YAML::LoadFile(kSource + "/deploy/ci/gitlab-ci.yml");
  const YAML::Node job = gl["perfgate"];
  ASSERT_TRUE(job["script"].IsSequence());
  EXPECT_NE(job["script"][1].as<std::string>().find("deploy/ci/perfgate-pr.sh perfgate-out -- perfgate-agent run"),
            std::string::npos);
  EXPECT_EQ(job["artifacts"]["reports"]["junit"].as<std::string>(), "perfgate-out/junit.xml");
  EXPECT_NE(job["after_script"][0].as<std::string>().find("deploy/ci/post-gitlab.sh"), std::string::npos);
}

}  // namespace
}  // namespace perfgate::ci_e2e_test
