// `perfgate-agent ab --count` over a real Google Benchmark program (not
// perfgate's) and over perfgate's own host case: each case counted under
// callgrind in one process a side. A
// build against itself must pass, whatever the size of its environment
// (which moves the stack, and so addresses, but not the instructions), and
// 1 % more work (PERFGATE_WORK_SLOWDOWN=1, real extra loop iterations) must
// be caught with one process a side; time and count are reported side by
// side when both are measured.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/processes.h"

namespace perfgate {
namespace {

using testing::Bin;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

// Time metrics that cannot be decided in three rounds on a shared machine
// pass: what the side-by-side test checks is the count and the notes.
constexpr char kPolicy[] = R"(version: 1
defaults:
  tolerance: 10%
  inconclusive: pass
)";

class CountedAbEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = TempDir::Create("perfgate-counted-ab-e2e-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<TempDir>(std::move(*dir));
    policy_ = dir_->Join("policy.yaml");
    std::ofstream(policy_) << kPolicy;
  }

  CommandResult Ab(const std::string& baseline, const std::string& candidate, const std::vector<std::string>& more) {
    std::vector<std::string> argv = {Bin("agent/perfgate-agent"), "ab", "--offline", "--baseline-cmd", baseline,
                                     "--candidate-cmd", candidate, "--policy", policy_, "--json", report_json(),
                                     "--branch", "topic", "--commit", "c0ffee"};
    argv.insert(argv.end(), more.begin(), more.end());
    auto r = RunCommand(argv, {}, std::chrono::minutes(3));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    std::cout << r->output;  // a failing test shows what was counted
    return *r;
  }

  nlohmann::json Verdict(const std::string& metric) {
    std::ifstream in(report_json());
    const nlohmann::json report = nlohmann::json::parse(in);
    for (const auto& v : report.at("verdicts")) {
      if (v.at("metric") == metric) return v;
    }
    ADD_FAILURE() << "no verdict of " << metric << " in " << report.dump();
    return nlohmann::json::object();
  }

  std::string report_json() const { return dir_->Join("report.json"); }

  std::unique_ptr<TempDir> dir_;
  std::string policy_;
};

// The program as a team runs it; --count adds the flags it needs.
std::string Gbench(const std::string& binary, const std::string& env = "") {
  return (env.empty() ? "" : "env " + env + " ") + Bin(binary) +
         " --benchmark_repetitions={samples} --benchmark_min_time=0.05 --benchmark_out={out}";
}

TEST_F(CountedAbEndToEnd, PassesABuildAgainstItselfWithAnotherEnvironmentSize) {
  const CommandResult r = Ab(Gbench("tests/work_bench_0"),
                             Gbench("tests/work_bench_0", "PERFGATE_PADDING=" + std::string(3000, 'x')),
                             {"--count", "instructions", "--count-only"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json v = Verdict("instructions");
  EXPECT_EQ(v.at("verdict"), "pass") << v.at("note");
  EXPECT_EQ(v.at("method"), "count");
  EXPECT_EQ(v.at("unit"), "instr/iter");
  EXPECT_LT(std::abs(v.at("change").get<double>()), 0.001) << v.at("note");
}

TEST_F(CountedAbEndToEnd, CatchesOnePercentMoreWorkWithOneProcessASide) {
  const CommandResult r = Ab(Gbench("tests/work_bench_0"), Gbench("tests/work_bench_0", "PERFGATE_WORK_SLOWDOWN=1"),
                             {"--count", "instructions", "--count-only"});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const nlohmann::json v = Verdict("instructions");
  EXPECT_EQ(v.at("verdict"), "regression") << v.at("note");
  EXPECT_GT(v.at("change").get<double>(), 0.008);
  EXPECT_LT(v.at("change").get<double>(), 0.013);
}

TEST_F(CountedAbEndToEnd, ReportsTimeAndCountSideBySideWithWhatTheirAgreementMeans) {
  const CommandResult r = Ab(Gbench("tests/work_bench_0"), Gbench("tests/work_bench_30"),
                             {"--count", "cache", "--rounds", "3", "--block-samples", "3", "--no-confirm"});
  ASSERT_EQ(r.exit_code, 1) << r.output;
  const nlohmann::json count = Verdict("instructions");
  EXPECT_EQ(count.at("verdict"), "regression");
  EXPECT_GT(count.at("change").get<double>(), 0.25);
  EXPECT_EQ(Verdict("sim_l1_misses").at("method"), "count");
  EXPECT_EQ(Verdict("sim_branch_mispredicts").at("method"), "count");
  const nlohmann::json time = Verdict("cpu_time");
  EXPECT_NE(time.at("method"), "count");
  const std::string note = time.at("note");
  // 30 % more work is either decided in three rounds (both witnesses) or
  // not yet on a busy machine (the counts alone): either way the note says
  // what the counts say.
  EXPECT_TRUE(note.find("strongest evidence") != std::string::npos ||
              note.find("time could not decide yet, the counts did") != std::string::npos)
      << note;
}

// perfgate's own host case, counted between the engine's client requests:
// small enough that a process under callgrind takes seconds.
std::vector<std::string> OwnCase() {
  return {"--filter", "kernels/sgemm*", "--set", "m=32", "--set", "n=32", "--set", "k=32", "--count",
          "instructions", "--count-only"};
}

TEST_F(CountedAbEndToEnd, CountsPerfgatesOwnHostCaseAlikeOnBothSidesOfOneBuild) {
  std::vector<std::string> argv = {Bin("agent/perfgate-agent"), "ab", "--offline", "--baseline",
                                   Bin("agent/perfgate-agent"), "--candidate", Bin("agent/perfgate-agent"),
                                   "--policy", policy_, "--json", report_json()};
  for (const std::string& a : OwnCase()) argv.push_back(a);
  auto r = RunCommand(argv, {}, std::chrono::minutes(2));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 0) << r->output;
  const nlohmann::json v = Verdict("instructions");
  EXPECT_EQ(v.at("benchmark"), "kernels/sgemm{k=32,m=32,n=32,threads=1}");
  EXPECT_EQ(v.at("verdict"), "pass") << v.at("note");
  EXPECT_LT(std::abs(v.at("change").get<double>()), 0.001) << v.at("note");
  // The samples' multiply-adds (16 a vector instruction at most), not the process's millions.
  EXPECT_GT(v.at("baseline_median").get<double>(), 32 * 32 * 32 / 16);
  EXPECT_LT(v.at("baseline_median").get<double>(), 1e6);
}

TEST_F(CountedAbEndToEnd, CatchesWorkAddedToPerfgatesOwnHostCaseByItsCount) {
  std::vector<std::string> argv = {Bin("agent/perfgate-agent"), "ab", "--offline", "--baseline",
                                   Bin("agent/perfgate-agent"), "--candidate",
                                   Bin("agent/perfgate-agent") + " --inject-slowdown kernels/sgemm*=20",
                                   "--policy", policy_, "--json", report_json()};
  for (const std::string& a : OwnCase()) argv.push_back(a);
  auto r = RunCommand(argv, {}, std::chrono::minutes(2));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 1) << r->output;
  EXPECT_EQ(Verdict("instructions").at("verdict"), "regression");
}

}  // namespace
}  // namespace perfgate
