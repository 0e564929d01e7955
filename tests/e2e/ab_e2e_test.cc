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

// The test machine is a shared 2-core VM on which other jobs run: an A/A
// difference's interval there can stay wider than twice the tolerance for
// the whole budget, which the gate rightly calls too noisy (exit 3). The
// policy passes such undecided metrics, so that these tests check what they
// are about: a slowdown far beyond any noise there is a regression, and
// identical sides are never one. How small a slowdown the gate can catch is
// the simulation's and the benchmark's to say (docs/statistics.md).
constexpr char kPolicy[] = R"(version: 1
defaults:
  tolerance: 10%
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
    // One case, adaptive rounds of 0.2 s blocks within a 60 s budget.
    auto r = RunCommand({agent, "ab", "--offline", "--suite", "kernels", "--filter",
                         "sgemm{k=512,m=512,*", "--set", "k=512", "--block-time", "0.2",
                         "--case-budget", "60", "--timeout", "20",
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

TEST_F(AbEndToEnd, CatchesAFiftyPercentSlowdownInjectedIntoTheCandidateSide) {
  const CommandResult r =
      Ab(Bin("agent/perfgate-agent") + " --inject-slowdown '" + kSlowedCases + "=50'");
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
    // 50 % more time is a third less throughput. A busy neighbour slows the
    // injected spin too (+117 % measured with one core kept busy), so the
    // upper bound only catches a unit or sign error.
    EXPECT_GT(change, 0.2) << key << " " << v.at("metric");
    EXPECT_LT(change, 4.0) << key << " " << v.at("metric");
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
    EXPECT_NE(v.at("note").get<std::string>().find("processes a side, paired by round"), std::string::npos)
        << v.at("note");
  }
}

}  // namespace
}  // namespace perfgate
