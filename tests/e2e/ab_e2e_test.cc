// `perfgate-agent ab` over real processes: both sides are the agent binary
// itself, measuring single-threaded sgemm (compute-bound, the steadiest
// host case), once with a known slowdown injected into the candidate side
// and once with two identical sides (A/A).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

#include "tests/support/processes.h"

namespace perfgate {
namespace {

using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

using testing::Bin;

// The default 3 % tolerance. The test machine is a shared 2-core VM on which
// other jobs run: an A/A difference's interval there is often wider than
// twice the tolerance, which the gate rightly calls too noisy (exit 3). The
// policy passes such undecided metrics, so that these tests check what they
// are about: a 5 % slowdown is a regression, and identical sides are never one.
constexpr char kPolicy[] = R"(version: 1
defaults:
  tolerance: 3%
  inconclusive: pass
)";

constexpr char kSlowedCases[] = "kernels/sgemm{k=512*";

class AbEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create("perfgate-ab-e2e-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<TempDir>(std::move(*dir));
    policy_ = dir_->Join("policy.yaml");
    std::ofstream(policy_) << kPolicy;
  }

  // Runs `perfgate-agent ab --offline` on the sgemm k=512 cases; the report
  // lands in report_json().
  CommandResult Ab(const std::string& candidate_command) {
    const std::string agent = Bin("agent/perfgate-agent");
    // One case, 16 rounds of 5: on this VM a block now and then lands on a
    // time-sliced core, and with 8 blocks of 4 such blocks widened the
    // interval past twice the tolerance in about one run of five.
    auto r = RunCommand({agent, "ab", "--offline", "--suite", "kernels", "--filter",
                         "sgemm{k=512,m=512,*", "--set", "k=512", "--rounds", "16",
                         "--block-samples", "5", "--timeout", "20",
                         "--policy", policy_, "--baseline", agent, "--candidate", candidate_command,
                         "--json", report_json(), "--branch", "topic", "--commit", "c0ffee"},
                        {}, std::chrono::minutes(3));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    // Printed so that a failing test shows what was measured.
    std::cout << r->output;
    return *r;
  }

  nlohmann::json Report() {
    std::ifstream in(report_json());
    return nlohmann::json::parse(in);
  }

  std::string report_json() const { return dir_->Join("report.json"); }

  std::unique_ptr<TempDir> dir_;
  std::string policy_;
};

TEST_F(AbEndToEnd, CatchesAFivePercentSlowdownInjectedIntoTheCandidateSide) {
  const CommandResult r =
      Ab(Bin("agent/perfgate-agent") + " --inject-slowdown '" + kSlowedCases + "=5'");
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const nlohmann::json report = Report();
  EXPECT_EQ(report.at("mode"), "ab");
  EXPECT_EQ(report.at("candidate_branch"), "topic");
  unsigned regressions = 0;
  for (const auto& v : report.at("verdicts")) {
    const std::string key = v.at("benchmark");
    ASSERT_EQ(key.rfind("kernels/sgemm{k=512,m=512,", 0), 0u) << key;
    if (v.at("verdict") != "regression") continue;
    ++regressions;
    const double change = v.at("change");
    EXPECT_GT(change, 0.03) << key << " " << v.at("metric");
    // 5 % injected; a loaded 2-core runner has been seen to stretch it to 14 %.
    EXPECT_LT(change, 0.15) << key << " " << v.at("metric");
    EXPECT_NE(v.at("note").get<std::string>().find("confirmed by a second interleaved measurement"),
              std::string::npos)
        << v.at("note");
  }
  EXPECT_GT(regressions, 0u);
}

TEST_F(AbEndToEnd, PassesTwoIdenticalSides) {
  const CommandResult r = Ab(Bin("agent/perfgate-agent"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json report = Report();
  ASSERT_EQ(report.at("verdicts").size(), 2u);  // time and throughput
  for (const auto& v : report.at("verdicts")) {
    EXPECT_NE(v.at("verdict"), "regression") << v.at("benchmark") << " " << v.at("metric");
    EXPECT_NE(v.at("verdict"), "missing") << v.at("benchmark") << " " << v.at("metric");
    EXPECT_EQ(v.at("candidate_samples"), 80) << v.at("benchmark");
  }
}

}  // namespace
}  // namespace perfgate
