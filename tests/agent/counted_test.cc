#include "agent/counted.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/count_metrics.h"
#include "tests/support/processes.h"

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

// A stand-in for Nsight Compute's command line, which needs a GPU: it takes
// ncu's options as NcuArgv gives them, writes the recorded CSV `csv` where
// --log-file says, and runs the program after its options, as ncu does.
// The program is a stand-in agent that logs its arguments and prints a
// recorded `sample` result of the case.
class NcuNode {
 public:
  explicit NcuNode(const std::string& csv) : dir_(*testing::TempDir::Create("perfgate-ncu-")) {
    const std::string data = std::string(PERFGATE_TEST_DATA_DIR) + "/ncu/";
    Write("ncu", "#!/bin/sh\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n    --csv) shift ;;\n"
                 "    --log-file) cp '" + data + csv + "' \"$2\"; shift 2 ;;\n    --*) shift 2 ;;\n"
                 "    *) break ;;\n  esac\ndone\nexec \"$@\"\n");
    Write("agent", "#!/bin/sh\necho \"$@\" > '" + dir_.Join("args") + "'\ncat '" + data + "sample_result.json'\n");
  }
  CountedAgent Agent(CountTool tool = CountTool::kNcu, std::vector<std::string> worker = {"--suite", "kernels"},
                     double timeout_s = 600) const {
    CountOptions o;
    o.tool = tool;
    o.ncu = dir_.Join("ncu");
    o.work_dir = dir_.path();
    o.timeout_s = timeout_s;
    const BenchmarkId id{"kernels", "sgemm", {{"k", "32"}, {"m", "32"}, {"n", "32"}, {"threads", "1"}}};
    return CountedAgent({dir_.Join("agent")}, std::move(worker), {id}, 3, o);
  }
  std::string Args() const {
    std::ifstream in(dir_.Join("args"));
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_.Join(name)) << text;
    ::chmod(dir_.Join(name).c_str(), 0755);
  }
  testing::TempDir dir_;
};

constexpr char kCase[] = "kernels/sgemm{k=32,m=32,n=32,threads=1}";

TEST(CountedAgent, UnderNcuTheCaseCarriesItsKernelsCountsPerSample) {
  NcuNode node("sgemm_raw.csv");
  CountedAgent agent = node.Agent();
  auto counted = agent.Count(kCase);
  ASSERT_TRUE(counted.ok()) << counted.status();
  ASSERT_EQ(counted->status, CaseStatus::kOk) << counted->reason;
  ASSERT_EQ(counted->samples.size(), 1u);
  std::map<std::string, double> m;
  for (size_t i = 0; i < counted->metrics.size(); ++i) m[counted->metrics[i].name] = counted->samples[0].values[i];
  // Three launches over three samples: one launch's 1 183 744 warp instructions.
  EXPECT_DOUBLE_EQ(m.at(kGpuInstructionsMetric), 1183744);
  EXPECT_EQ(m.count(kGpuDramBytesMetric), 1u);
  EXPECT_EQ(m.count(kGpuOccupancyMetric), 1u);
  EXPECT_EQ(m.count(kInstructionsMetric), 0u);  // not the host's count
  // The program was asked to open the profiler's range around its samples.
  const std::string args = node.Args();
  EXPECT_NE(args.find(std::string("sample --case ") + kCase + " --samples 3 --counted --counted-gpu"),
            std::string::npos)
      << args;
}

TEST(CountedAgent, ANodeThatHidesTheGpuCountersIsAnErrorThatSaysSo) {
  NcuNode node("permission.log");
  CountedAgent agent = node.Agent();
  auto counted = agent.Count(kCase);
  ASSERT_FALSE(counted.ok());
  EXPECT_NE(counted.status().message().find("ERR_NVGPUCTRPERM"), std::string::npos) << counted.status();
}

TEST(CountedAgent, ACaseWhoseSamplesLaunchNoKernelIsSkippedWithTheReason) {
  NcuNode node("no_kernels.log");
  CountedAgent agent = node.Agent();
  auto counted = agent.Count(kCase);
  ASSERT_TRUE(counted.ok()) << counted.status();
  EXPECT_EQ(counted->status, CaseStatus::kSkipped);
  EXPECT_TRUE(counted->samples.empty());
  EXPECT_NE(counted->reason.find("no kernel"), std::string::npos) << counted->reason;
}

// With the hardware counters no tool wraps the process: the agent counts
// its own samples (`sample --counted-hw`) and prints the counts as the
// case's metrics, which are taken as they are.
TEST(CountedAgent, WithHardwareCountersTheSampleCountsItselfUnderNoTool) {
  NcuNode node("sgemm_raw.csv");
  CountedAgent agent = node.Agent(CountTool::kHardware);
  EXPECT_EQ(agent.ToolName(), "the CPU's hardware counters");
  auto counted = agent.Count(kCase);
  ASSERT_TRUE(counted.ok()) << counted.status();
  ASSERT_EQ(counted->status, CaseStatus::kOk) << counted->reason;
  const std::string args = node.Args();
  EXPECT_EQ(args.rfind(std::string("sample --case ") + kCase + " --samples 3 --counted-hw --suite kernels", 0), 0u)
      << args;
  EXPECT_EQ(args.find("--counted "), std::string::npos) << args;
  ASSERT_FALSE(counted->metrics.empty());
  EXPECT_EQ(counted->metrics.front().name, "time");  // the printed metrics, untouched
  EXPECT_EQ(CountToolOf("hw"), CountTool::kHardware);
  EXPECT_EQ(CountToolOf("gpu"), CountTool::kNcu);
  EXPECT_EQ(CountToolOf("cache"), CountTool::kCallgrind);
}

// The worker's per-case limit is the timed run's (15 s by default); a case
// counted under a tool runs tens of times slower, so the counted process
// asks for its own limit instead, or a case of a second a sample never
// finishes its count.
TEST(CountedAgent, TheCountedSampleGetsTheCountedProcesssTimeLimitNotTheTimedRuns) {
  NcuNode node("sgemm_raw.csv");
  CountedAgent agent = node.Agent(CountTool::kHardware, {"--suite", "kernels", "--timeout", "15"}, 240);
  auto counted = agent.Count(kCase);
  ASSERT_TRUE(counted.ok()) << counted.status();
  const std::string args = node.Args();
  EXPECT_NE(args.find("--suite kernels --timeout 240"), std::string::npos) << args;
  EXPECT_EQ(args.find("--timeout 15"), std::string::npos) << args;
}

}  // namespace
}  // namespace perfgate::agent
