#include "agent/counted.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace perfgate::agent {
namespace {

bool Has(const std::vector<std::string>& argv, const std::string& word) {
  return std::find(argv.begin(), argv.end(), word) != argv.end();
}

TEST(CountedArgv, RunsTheCommandUnderCallgrindCollectingOnlyInTheBenchmarkFunctions) {
  CountOptions options;
  const std::vector<std::string> argv = CountedArgv({"./bench", "--benchmark_repetitions={samples}", "--benchmark_out={out}"},
                                                    "BM_Work/200000", "/w/1.json", "/w/cg", options);
  ASSERT_GE(argv.size(), 6u);
  EXPECT_EQ(argv[0], "valgrind");
  EXPECT_TRUE(Has(argv, "--tool=callgrind"));
  EXPECT_TRUE(Has(argv, "--collect-atstart=no"));
  EXPECT_TRUE(Has(argv, "--toggle-collect=BM_*"));
  EXPECT_TRUE(Has(argv, "--callgrind-out-file=/w/cg.%p"));
  EXPECT_FALSE(Has(argv, "--cache-sim=yes"));
  EXPECT_TRUE(Has(argv, "--benchmark_repetitions=1"));
  EXPECT_TRUE(Has(argv, "--benchmark_out=/w/1.json"));
}

TEST(CountedArgv, OverridesTheCommandsOwnFlagsWithOneCallOfOneIterationOfOneCase) {
  CountOptions options;
  const std::vector<std::string> argv =
      CountedArgv({"./bench", "--benchmark_min_time=2", "--benchmark_filter=.*"}, "BM_A/8", "/w/1.json", "/w/cg", options);
  const auto at = [&](const std::string& w) { return std::find(argv.begin(), argv.end(), w) - argv.begin(); };
  EXPECT_GT(at("--benchmark_min_time=1e-9"), at("--benchmark_min_time=2"));
  EXPECT_GT(at("--benchmark_filter=^BM_A/8$"), at("--benchmark_filter=.*"));
}

TEST(CountedArgv, SimulatesCachesAndBranchesWhenAsked) {
  CountOptions options;
  options.simulate = true;
  options.toggle = "Bench*";
  const std::vector<std::string> argv = CountedArgv({"./bench"}, "Bench_X", "/w/o.json", "/w/cg", options);
  EXPECT_TRUE(Has(argv, "--cache-sim=yes"));
  EXPECT_TRUE(Has(argv, "--branch-sim=yes"));
  EXPECT_TRUE(Has(argv, "--toggle-collect=Bench*"));
}

TEST(ExactFilter, EscapesWhatARegularExpressionWouldReadAsAnOperator) {
  EXPECT_EQ(ExactFilter("BM_Work/200000"), "^BM_Work/200000$");
  EXPECT_EQ(ExactFilter("BM_T<int>/8/real_time"), "^BM_T<int>/8/real_time$");
  EXPECT_EQ(ExactFilter("BM_x.y(1)+[2]"), "^BM_x\\.y\\(1\\)\\+\\[2\\]$");
}

TEST(CallgrindArgv, LeavesCollectionToTheProgramsClientRequestsWithoutAToggle) {
  const std::vector<std::string> argv = CallgrindArgv("/w/cg", CountOptions{}, "");
  EXPECT_TRUE(Has(argv, "--collect-atstart=no"));
  EXPECT_TRUE(std::none_of(argv.begin(), argv.end(), [](const std::string& a) { return a.rfind("--toggle-collect", 0) == 0; }));
}

}  // namespace
}  // namespace perfgate::agent
