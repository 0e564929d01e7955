#include "cli/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/identity.h"
#include "tests/support/processes.h"

namespace perfgate::cli {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

// A fresh directory under the system's temporary directory, removed at the end.
perfgate::testing::TempDir Scratch() {
  auto dir = perfgate::testing::TempDir::Create("perfgate-compare-");
  EXPECT_TRUE(dir.ok()) << dir.status();
  return std::move(*dir);
}

RunMeta Meta(const std::string& host) {
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = host;
  meta.environment.sku = "h100-sxm5-80gb";
  meta.environment.fields = {{"gpu_name", "NVIDIA H100 80GB HBM3"}, {"host_name", host}};
  meta.branch = "main";
  meta.commit = "0123456789abcdef";
  meta.node = host;
  meta.started_at = std::chrono::system_clock::from_time_t(1'790'000'000);
  return meta;
}

// A case of 30 samples spread ±1 % around `level` ms; the spread is the same
// pattern for every level, so scaling the level scales every sample.
CaseResult TimedCase(const std::string& name, double level) {
  CaseResult c;
  c.benchmark = {"kernels", name, {{"bytes", "4096"}}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  for (uint32_t i = 0; i < 30; ++i) {
    c.samples.push_back({i, {level * (1.0 + 0.01 * std::sin(1.7 * i))}, false});
  }
  c.status = CaseStatus::kOk;
  return c;
}

std::string WriteFile(const perfgate::testing::TempDir& dir, const std::string& name, const RunMeta& meta,
                      const std::vector<CaseResult>& cases) {
  const std::string path = dir.Join(name);
  EXPECT_TRUE(WriteResultFile(path, meta, cases).ok());
  return path;
}

const gate::MetricVerdict* Find(const gate::GateResult& r, const std::string& benchmark,
                                const std::string& metric) {
  for (const gate::MetricVerdict& v : r.verdicts) {
    if (v.benchmark == benchmark && v.metric == metric) return &v;
  }
  return nullptr;
}

struct Outcome {
  int code;
  std::string out, err;
};

Outcome RunCompare(const std::string& baseline, const std::string& candidate,
                   const std::string& policy_file = "") {
  CompareOptions o;
  o.baseline = baseline;
  o.candidate = candidate;
  o.policy_file = policy_file;
  std::ostringstream out, err;
  const int code = CompareCommand(o, out, err);
  return {code, out.str(), err.str()};
}

TEST(Compare, TenPercentSlowerCaseIsARegressionAndExitsOne) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string a = WriteFile(dir, "a.json", Meta("node-1"), {TimedCase("copy", 10), TimedCase("triad", 5)});
  const std::string b =
      WriteFile(dir, "b.json", Meta("node-1"), {TimedCase("copy", 11), TimedCase("triad", 5)});

  const Outcome run = RunCompare(a, b);
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("kernels/copy{bytes=4096}"));

  auto base = ReadResultFile(a);
  auto cand = ReadResultFile(b);
  ASSERT_TRUE(base.ok() && cand.ok());
  const gate::GateResult result = gate::EvaluateGate(BuildCompareInput(*base, a, *cand, b), gate::Policy{});
  const gate::MetricVerdict* copy = Find(result, "kernels/copy{bytes=4096}", "time");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->verdict, gate::Verdict::kRegression);
  EXPECT_NEAR(copy->change, 0.10, 1e-9);
  const gate::MetricVerdict* triad = Find(result, "kernels/triad{bytes=4096}", "time");
  ASSERT_NE(triad, nullptr);
  EXPECT_EQ(triad->verdict, gate::Verdict::kPass);
}

TEST(Compare, IdenticalFilesPassAndExitZero) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::vector<CaseResult> cases = {TimedCase("copy", 10), TimedCase("triad", 5)};
  const std::string a = WriteFile(dir, "a.json", Meta("node-1"), cases);
  const std::string b = WriteFile(dir, "b.json", Meta("node-1"), cases);

  const Outcome run = RunCompare(a, b);
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("environments differ")));
}

TEST(Compare, GoogleBenchmarkRepetitionsTenPercentSlowerRegress) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string a = std::string(PERFGATE_FORMATS_DIR) + "/gbench_repetitions.json";
  std::ifstream in(a);
  json doc = json::parse(in);
  for (json& row : doc["benchmarks"]) row["real_time"] = row["real_time"].get<double>() * 1.1;
  const std::string b = dir.Join("gbench_slower.json");
  std::ofstream(b) << doc.dump();
  // Five repetitions a side cannot reach the default 1 % false-discovery
  // rate over eight metrics (the exact test's smallest p is 2/252); a team
  // gating such files sets 5 % or runs more repetitions.
  const std::string policy = dir.Join("policy.yaml");
  std::ofstream(policy) << "version: 1\ndefaults:\n  fdr: 5%\n";

  const Outcome run = RunCompare(a, b, policy);
  EXPECT_EQ(run.code, 1) << run.out << run.err;

  auto base = ReadResultFile(a);
  auto cand = ReadResultFile(b);
  ASSERT_TRUE(base.ok() && cand.ok());
  const gate::GateInput input = BuildCompareInput(*base, a, *cand, b);
  EXPECT_EQ(input.mode, gate::Mode::kAb);
  EXPECT_EQ(input.sku, "unknown");  // Google Benchmark names no CPU model
  gate::Policy five_percent;
  five_percent.fdr = 0.05;
  const gate::GateResult result = gate::EvaluateGate(input, five_percent);
  unsigned regressions = 0;
  for (const gate::MetricVerdict& v : result.verdicts) {
    if (v.metric == "real_time") {
      // Five repetitions of a noisy case may be too few to decide, but never a pass.
      EXPECT_THAT(v.verdict, ::testing::AnyOf(gate::Verdict::kRegression, gate::Verdict::kTooNoisy))
          << v.benchmark;
      EXPECT_NEAR(v.change, 0.10, 1e-9) << v.benchmark;
      if (v.verdict == gate::Verdict::kRegression) ++regressions;
    } else if (v.metric == "cpu_time") {
      EXPECT_NE(v.verdict, gate::Verdict::kRegression) << v.benchmark;
    }
  }
  EXPECT_GT(regressions, 0u);
}

TEST(Compare, MissingFileExitsTwoNamingThePath) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string a = WriteFile(dir, "a.json", Meta("node-1"), {TimedCase("copy", 10)});
  const std::string missing = dir.Join("no-such-results.json");

  const Outcome run = RunCompare(a, missing);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr(missing));
}

TEST(Compare, FileAgainstRunIdExitsTwoSayingBothMustBeAlike) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string a = WriteFile(dir, "a.json", Meta("node-1"), {TimedCase("copy", 10)});
  const std::string run_id = NewUuid();

  const Outcome run = RunCompare(a, run_id);
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("two result files or two run ids"));
  EXPECT_THAT(run.err, HasSubstr(run_id));
}

TEST(Compare, SkuFlagOverridesTheCandidateFilesSku) {
  ResultSet base, cand;
  cand.sku = "h100-sxm5-80gb";
  EXPECT_EQ(BuildCompareInput(base, "a", cand, "b").sku, "h100-sxm5-80gb");
  EXPECT_EQ(BuildCompareInput(base, "a", cand, "b", "a100-sxm4-80gb").sku, "a100-sxm4-80gb");
}

TEST(Compare, ContextDifferencesNameMachineFieldsButNotRunFields) {
  ResultSet a, b;
  a.context = {{"host_name", "node-1"}, {"num_cpus", "2"}, {"date", "2026-11-01"}, {"run.commit", "abc"},
               {"gpu_name", "H100"}};
  b.context = {{"host_name", "node-2"}, {"num_cpus", "2"}, {"date", "2026-11-02"}, {"run.commit", "def"},
               {"mhz_per_cpu", "2600"}};
  EXPECT_EQ(ContextDifferences(a, b), (std::vector<std::string>{"gpu_name", "host_name", "mhz_per_cpu"}));
}

TEST(Compare, DifferentHostsAreNotedInOneAdvisoryLine) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::vector<CaseResult> cases = {TimedCase("copy", 10)};
  const std::string a = WriteFile(dir, "a.json", Meta("node-1"), cases);
  const std::string b = WriteFile(dir, "b.json", Meta("node-2"), cases);

  const Outcome run = RunCompare(a, b);
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("environments differ in host_name;"));
}

}  // namespace
}  // namespace perfgate::cli
