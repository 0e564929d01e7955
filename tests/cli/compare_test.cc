#include "cli/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cli/commands.h"
#include "cli/ingest.h"
#include "common/exit_codes.h"
#include "formats/calibration_file.h"
#include "common/identity.h"
#include "gate/report.h"
#include "tests/support/gate_reports.h"
#include "tests/support/processes.h"

namespace perfgate::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::Not;
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

Outcome RunCompareFiles(const std::vector<std::string>& baseline, const std::vector<std::string>& candidate) {
  CompareOptions o;
  o.baseline_files = baseline;
  o.candidate_files = candidate;
  std::ostringstream out, err;
  const int code = CompareCommand(o, out, err);
  return {code, out.str(), err.str()};
}

// Each process lands a little apart: file k of a side is offset by these.
constexpr double kProcessLuck[] = {1.0, 1.012, 0.991, 1.006, 0.995, 1.003};

// `n` result files of one side, file k at level * factor * kProcessLuck[k].
std::vector<std::string> Files(const perfgate::testing::TempDir& dir, const std::string& side, unsigned n,
                               double copy_factor) {
  std::vector<std::string> out;
  for (unsigned k = 0; k < n; ++k) {
    out.push_back(WriteFile(dir, side + std::to_string(k) + ".json", Meta("node-1"),
                            {TimedCase("copy", 10 * copy_factor * kProcessLuck[k]),
                             TimedCase("triad", 5 * kProcessLuck[(k + 2) % 6])}));
  }
  return out;
}

TEST(Compare, OneFileASideIsTooFewToJudgeWhateverItsSamplesSay) {
  // 30 samples a side within ±1 %, 10 % apart: within one process each,
  // which says nothing about how far a second process would land.
  const perfgate::testing::TempDir dir = Scratch();
  const std::string a = WriteFile(dir, "a.json", Meta("node-1"), {TimedCase("copy", 10), TimedCase("triad", 5)});
  const std::string b =
      WriteFile(dir, "b.json", Meta("node-1"), {TimedCase("copy", 11), TimedCase("triad", 5)});

  const Outcome run = RunCompare(a, b);
  EXPECT_EQ(run.code, 3) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("kernels/copy{bytes=4096}"));
  // The verdict names the command that gave it.
  EXPECT_THAT(run.out, StartsWith("perfgate compare: candidate "));
  EXPECT_THAT(run.out, HasSubstr("\nperfgate compare: INCONCLUSIVE"));
  EXPECT_THAT(run.out, Not(HasSubstr("perfgate gate")));

  auto base = ReadResultFile(a);
  auto cand = ReadResultFile(b);
  ASSERT_TRUE(base.ok() && cand.ok());
  const gate::GateResult result = gate::EvaluateGate(BuildCompareInput(*base, a, *cand, b), gate::Policy{});
  const gate::MetricVerdict* copy = Find(result, "kernels/copy{bytes=4096}", "time");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->verdict, gate::Verdict::kTooFewRuns);
  EXPECT_NEAR(copy->change, 0.10, 1e-9);
  EXPECT_THAT(copy->note, HasSubstr("several result files per side"));
}

TEST(Compare, SixFilesASideTenPercentSlowerRegressAndTheOthersPass) {
  const perfgate::testing::TempDir dir = Scratch();
  const Outcome run = RunCompareFiles(Files(dir, "a", 6, 1.0), Files(dir, "b", 6, 1.10));
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("6 processes a side"));

  std::vector<ResultSet> base, cand;
  for (unsigned k = 0; k < 6; ++k) {
    base.push_back(*ReadResultFile(dir.Join("a" + std::to_string(k) + ".json")));
    cand.push_back(*ReadResultFile(dir.Join("b" + std::to_string(k) + ".json")));
  }
  const gate::GateResult result = gate::EvaluateGate(BuildCompareInput(base, "a", cand, "b"), gate::Policy{});
  const gate::MetricVerdict* copy = Find(result, "kernels/copy{bytes=4096}", "time");
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(copy->verdict, gate::Verdict::kRegression) << copy->note;
  EXPECT_EQ(copy->method, gate::Method::kBlocks);
  EXPECT_EQ(copy->blocks, 6u);
  EXPECT_NEAR(copy->change, 0.10, 0.01);
  EXPECT_EQ(Find(result, "kernels/triad{bytes=4096}", "time")->verdict, gate::Verdict::kPass);
}

TEST(Compare, WritesThePullRequestCommentChecksPayloadAndJobSummaryAsTheGateDoes) {
  const perfgate::testing::TempDir dir = Scratch();
  CompareOptions o;
  o.baseline_files = Files(dir, "a", 6, 1.0);
  o.candidate_files = Files(dir, "b", 6, 1.10);
  o.pr.comment_file = dir.Join("comment.md");
  o.pr.checks_file = dir.Join("checks.json");
  o.pr.summary_file = dir.Join("summary.md");
  std::ofstream(o.pr.summary_file) << "earlier steps\n";
  std::ostringstream out, err;
  EXPECT_EQ(CompareCommand(o, out, err), 1) << out.str() << err.str();
  const std::string comment = perfgate::testing::ReadFile(o.pr.comment_file).value_or("");
  EXPECT_THAT(comment, HasSubstr("REGRESSION"));
  EXPECT_THAT(comment, HasSubstr("kernels/copy{bytes=4096}"));
  const nlohmann::json checks =
      nlohmann::json::parse(perfgate::testing::ReadFile(o.pr.checks_file).value_or("{}"), nullptr, false);
  EXPECT_EQ(checks.value("conclusion", ""), "failure") << checks.dump();
  const std::string summary = perfgate::testing::ReadFile(o.pr.summary_file).value_or("");
  EXPECT_THAT(summary, ::testing::StartsWith("earlier steps\n"));  // appended, as GitHub's summary wants
  EXPECT_THAT(summary, HasSubstr("kernels/copy{bytes=4096}"));
  // A file that cannot be written is an error naming it, not a verdict.
  o.pr.comment_file = dir.Join("no/such/dir/comment.md");
  std::ostringstream out2, err2;
  EXPECT_EQ(CompareCommand(o, out2, err2), 2);
  EXPECT_THAT(err2.str(), HasSubstr("no/such/dir/comment.md"));
}

TEST(Compare, IdenticalFilesPassAndExitZero) {
  const perfgate::testing::TempDir dir = Scratch();
  const Outcome run = RunCompareFiles(Files(dir, "a", 6, 1.0), Files(dir, "b", 6, 1.0));
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("environments differ")));
}

// Copies of the captured Google Benchmark file, each one "process" of a
// side: real_time scaled by factor * kProcessLuck[k].
std::vector<std::string> GbenchFiles(const perfgate::testing::TempDir& dir, const std::string& side,
                                     unsigned n, double factor) {
  std::ifstream in(std::string(PERFGATE_FORMATS_DIR) + "/gbench_repetitions.json");
  const json doc = json::parse(in);
  std::vector<std::string> out;
  for (unsigned k = 0; k < n; ++k) {
    json copy = doc;
    for (json& row : copy["benchmarks"]) {
      row["real_time"] = row["real_time"].get<double>() * factor * kProcessLuck[k];
    }
    out.push_back(dir.Join(side + std::to_string(k) + ".json"));
    std::ofstream(out.back()) << copy.dump();
  }
  return out;
}

TEST(Compare, GoogleBenchmarkRepetitionsOfOneBinaryRunAreOneProcess) {
  // Five repetitions in one file ran in one process: 10 % slower
  // repetitions of one run cannot be told from that run's luck.
  const perfgate::testing::TempDir dir = Scratch();
  const std::string a = std::string(PERFGATE_FORMATS_DIR) + "/gbench_repetitions.json";
  const std::string b = GbenchFiles(dir, "b", 1, 1.1).front();
  const Outcome run = RunCompare(a, b);
  EXPECT_EQ(run.code, 3) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("too few runs"));
}

TEST(Compare, GoogleBenchmarkFilesOfSixRunsASideTenPercentSlowerRegress) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::vector<std::string> a = GbenchFiles(dir, "a", 6, 1.0);
  const std::vector<std::string> b = GbenchFiles(dir, "b", 6, 1.1);
  const Outcome run = RunCompareFiles(a, b);
  EXPECT_EQ(run.code, 1) << run.out << run.err;

  std::vector<ResultSet> base, cand;
  for (unsigned k = 0; k < 6; ++k) {
    base.push_back(*ReadResultFile(a[k]));
    cand.push_back(*ReadResultFile(b[k]));
  }
  const gate::GateInput input = BuildCompareInput(base, "a", cand, "b");
  EXPECT_EQ(input.mode, gate::Mode::kAb);
  EXPECT_EQ(input.sku, "unknown");  // Google Benchmark names no CPU model
  const gate::GateResult result = gate::EvaluateGate(input, gate::Policy{});
  unsigned regressions = 0;
  for (const gate::MetricVerdict& v : result.verdicts) {
    if (v.metric == "real_time") {
      EXPECT_EQ(v.verdict, gate::Verdict::kRegression) << v.benchmark << ": " << v.note;
      EXPECT_NEAR(v.change, 0.10, 0.01) << v.benchmark;
      ++regressions;
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
  EXPECT_EQ(run.code, 3) << run.out << run.err;  // one process a side
  EXPECT_THAT(run.out, HasSubstr("environments differ in host_name;"));
}

// A calibration of `meta`'s node and environment: both cases' time at 0.5 %
// over 10 processes (a single-run interval of ±1.6 %), measured `age` ago.
std::string WriteCalibration(const perfgate::testing::TempDir& dir, const RunMeta& meta,
                             std::chrono::hours age = std::chrono::hours(24)) {
  CalibrationSet set;
  set.node = meta.node;
  set.environment = meta.environment;
  set.measured_at = std::chrono::system_clock::now() - age;
  for (const char* name : {"copy", "triad"}) {
    set.entries.push_back({absl::StrCat("kernels/", name, "{bytes=4096}"), "time", "ms",
                           Direction::kLowerIsBetter, 0.005, 10});
  }
  const std::string path = dir.Join("calibration.json");
  EXPECT_TRUE(WriteCalibrationFile(path, set).ok());
  return path;
}

Outcome RunCalibratedCompare(const std::string& a, const std::string& b, const std::string& calibration,
                             const std::string& json) {
  CompareOptions o;
  o.baseline = a;
  o.candidate = b;
  o.calibration_file = calibration;
  o.json_file = json;
  std::ostringstream out, err;
  const int code = CompareCommand(o, out, err);
  return {code, out.str(), err.str()};
}

TEST(Compare, OneFileASideIsJudgedWithACalibrationOfTheNode) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string a = WriteFile(dir, "a.json", Meta("node-1"), {TimedCase("copy", 10), TimedCase("triad", 5)});
  const std::string b = WriteFile(dir, "b.json", Meta("node-1"), {TimedCase("copy", 13), TimedCase("triad", 5)});
  const std::string json_path = dir.Join("report.json");
  const Outcome run = RunCalibratedCompare(a, b, WriteCalibration(dir, Meta("node-1")), json_path);
  EXPECT_EQ(run.code, 1) << run.out << run.err;
  auto report = perfgate::testing::ReadGateReport(json_path);
  ASSERT_TRUE(report.ok()) << report.status();
  std::map<std::string, std::pair<gate::Method, gate::Verdict>> by_case;  // method, verdict
  for (const gate::MetricVerdict& v : report->result.verdicts) by_case[v.benchmark] = {v.method, v.verdict};
  EXPECT_EQ(by_case["kernels/copy{bytes=4096}"], std::make_pair(gate::Method::kCalibrated, gate::Verdict::kRegression));
  EXPECT_EQ(by_case["kernels/triad{bytes=4096}"], std::make_pair(gate::Method::kCalibrated, gate::Verdict::kPass));
}

TEST(Compare, ACalibrationOfAnotherEnvironmentOrStaleIsNotUsedAndTheNoteSaysWhy) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string a = WriteFile(dir, "a.json", Meta("node-1"), {TimedCase("copy", 10)});
  const std::string b = WriteFile(dir, "b.json", Meta("node-1"), {TimedCase("copy", 13)});
  RunMeta elsewhere = Meta("node-1");
  elsewhere.environment.fields["gpu_name"] = "NVIDIA H100 PCIe";
  const Outcome other = RunCalibratedCompare(a, b, WriteCalibration(dir, elsewhere), "");
  EXPECT_EQ(other.code, 3) << other.out << other.err;
  EXPECT_THAT(other.out, HasSubstr("not used: it was measured in another environment"));
  const Outcome stale =
      RunCalibratedCompare(a, b, WriteCalibration(dir, Meta("node-1"), std::chrono::hours(24 * 31)), "");
  EXPECT_EQ(stale.code, 3) << stale.out << stale.err;
  EXPECT_THAT(stale.out, HasSubstr("not used: it is stale"));
  const Outcome missing = RunCalibratedCompare(a, b, dir.Join("absent.json"), "");
  EXPECT_EQ(missing.code, 2);
  EXPECT_THAT(missing.err, HasSubstr("absent.json"));
}

// A sample index twice in a case: the coordinator would refuse it, `ingest`
// refuses the file before it opens a run, and `compare` refuses it with the
// same words instead of judging it.
TEST(Compare, RefusesAFileWithASampleIndexTwiceAsIngestDoes) {
  auto dir = Scratch();
  const std::vector<std::string> good = Files(dir, "base", 6, 1.0);
  CaseResult copy = TimedCase("copy", 10);
  copy.samples[10].index = 9;
  const std::string twice = WriteFile(dir, "twice.json", Meta("node-1"), {copy, TimedCase("triad", 5)});

  const Outcome compared = RunCompareFiles(good, {twice});
  EXPECT_EQ(compared.code, kExitError) << compared.out;
  EXPECT_THAT(compared.err, HasSubstr("twice.json: benchmark kernels/copy{bytes=4096} sample index 9 appears "
                                      "twice; each sample of a case has its own index"));
  EXPECT_THAT(compared.out, Not(HasSubstr("kernels/copy")));

  IngestOptions o;
  o.files = {twice};
  o.coordinator = "127.0.0.1:1";  // never reached: the file is refused first
  o.timeout_s = 1;
  o.branch = "main";
  ::testing::internal::CaptureStderr();
  const int ingested = IngestCommand(o);
  const std::string ingest_err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(ingested, kExitError);
  EXPECT_THAT(ingest_err, HasSubstr("twice.json: benchmark kernels/copy{bytes=4096} sample index 9 appears twice"));

  // With the index made unique again the same file is judged.
  copy.samples[10].index = 10;
  const Outcome judged = RunCompareFiles(good, {WriteFile(dir, "once.json", Meta("node-1"), {copy, TimedCase("triad", 5)})});
  EXPECT_NE(judged.code, kExitError) << judged.err;
  EXPECT_THAT(judged.out, HasSubstr("kernels/copy"));
}

// ---- nothing to compare is never a pass ----

std::string FormatsFixture(const std::string& name) { return std::string(PERFGATE_FORMATS_DIR) + "/" + name; }

// Google Benchmark's own test inputs (tools/gbench/Inputs/test4_run*.json)
// hold one aggregate row each and no repetition: the reader skips it, and
// a gate of what is left would judge no metric at all.
TEST(Compare, GoogleBenchmarksAggregateOnlyTestFilesExitTwoNamingEachFileAndWhatWasSkipped) {
  const std::string a = FormatsFixture("test4_run0.json"), b = FormatsFixture("test4_run1.json");
  const Outcome run = RunCompare(a, b);
  EXPECT_EQ(run.code, kExitError) << run.out << run.err;
  for (const std::string& file : {a, b}) {
    EXPECT_THAT(run.err, HasSubstr("nothing to compare in the " + std::string(file == a ? "baseline" : "candidate") +
                                   " file " + file + ": 1 case, none with samples: gbench/whocares skipped "
                                   "(only aggregates (zz) and no median or mean)"));
  }
  EXPECT_THAT(run.out, HasSubstr("note: " + a + ": 1 cases hold only aggregates other than median and mean"));
  EXPECT_THAT(run.out, Not(HasSubstr("PASS")));
}

TEST(Compare, OneFileOfNothingMeasuredAmongGoodOnesExitsTwoNamingThatFileAlone) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string good = FormatsFixture("gbench_repetitions.json"), empty = FormatsFixture("test4_run1.json");
  const Outcome run = RunCompareFiles({good, GbenchFiles(dir, "a", 1, 1.0).front()}, {good, empty});
  EXPECT_EQ(run.code, kExitError) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("nothing to compare in the candidate file " + empty));
  EXPECT_THAT(run.err, Not(HasSubstr(good + ":")));
  EXPECT_THAT(run.out, Not(HasSubstr("gbench/BM_")));  // no verdict table
}

TEST(Compare, SidesWithNoMetricInCommonAreInconclusiveNamingSomeMetricsOfEachSide) {
  const perfgate::testing::TempDir dir = Scratch();
  std::vector<std::string> a, b;
  for (int k = 0; k < 6; ++k) {
    a.push_back(WriteFile(dir, absl::StrCat("a", k, ".json"), Meta("node-1"), {TimedCase("copy", 10)}));
    b.push_back(WriteFile(dir, absl::StrCat("b", k, ".json"), Meta("node-1"),
                          {TimedCase("scale", 10), TimedCase("triad", 5)}));
  }
  const Outcome run = RunCompareFiles(a, b);
  EXPECT_EQ(run.code, kExitInconclusive) << run.out << run.err;
  EXPECT_THAT(run.err, HasSubstr("no metric in common"));
  EXPECT_THAT(run.err, HasSubstr("reports 1 (kernels/copy{bytes=4096} time)"));
  EXPECT_THAT(run.err, HasSubstr(") 2 (kernels/scale{bytes=4096} time, kernels/triad{bytes=4096} time)"));
  EXPECT_THAT(run.out, Not(HasSubstr("PASS")));
}

TEST(Compare, ACandidateWhoseEveryCaseFailedIsJudgedAndFails) {
  // A failure is evidence: the gate reports the case missing, not nothing.
  const perfgate::testing::TempDir dir = Scratch();
  CaseResult failed = TimedCase("copy", 10);
  failed.samples.clear();
  failed.status = CaseStatus::kFailed;
  failed.reason = "wrong result at element 7";
  std::vector<std::string> b;
  for (int k = 0; k < 6; ++k) b.push_back(WriteFile(dir, absl::StrCat("b", k, ".json"), Meta("node-1"), {failed}));
  const Outcome run = RunCompareFiles(Files(dir, "a", 6, 1.0), b);
  EXPECT_EQ(run.code, kExitRegression) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("wrong result at element 7"));
}

TEST(Compare, IngestAndExportRefuseAFileOfNothingMeasuredAndLeaveNothingBehind) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string empty = FormatsFixture("test4_run0.json");
  IngestOptions o;
  o.files = {FormatsFixture("gbench_repetitions.json"), empty};
  o.coordinator = "127.0.0.1:1";  // never reached: every file is read and refused first
  o.timeout_s = 1;
  o.sku = "cpu-amd-epyc-7b13";
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(IngestCommand(o), kExitError);
  const std::string ingest_err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(ingest_err, HasSubstr(empty + ": nothing to store: 1 case, none with samples: gbench/whocares skipped"));

  Config config;
  config.export_files = {FormatsFixture("gbench_repetitions.json"), empty};
  config.export_output = dir.Join("out.bmf.json");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(ExportCommand(config), kExitError);
  const std::string export_err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(export_err, HasSubstr(empty + ": nothing to export: 1 case, none with samples"));
  EXPECT_FALSE(std::filesystem::exists(config.export_output));
}

// Bencher Metric Format whose benchmarks are named "benchmarks" and "context"
// is taken for Google Benchmark's JSON; --format reads it as what it is.
TEST(Compare, NamedFormatReadsFilesThatDetectionMisreads) {
  const perfgate::testing::TempDir dir = Scratch();
  const auto bmf = [&](const std::string& name, double latency) {
    const std::string path = dir.Join(name);
    std::ofstream(path) << nlohmann::json{{"benchmarks", {{"latency", {{"value", latency}}}}},
                                          {"context", {{"latency", {{"value", 3.0}}}}}}
                               .dump();
    return path;
  };
  const std::string a = bmf("a.json", 10.0), b = bmf("b.json", 10.0);
  const Outcome detected = RunCompare(a, b);
  EXPECT_EQ(detected.code, kExitError);
  EXPECT_THAT(detected.err, HasSubstr(a + ": benchmarks"));
  CompareOptions o;
  o.baseline = a;
  o.candidate = b;
  o.format = "bencher-bmf";
  std::ostringstream out, err;
  const int code = CompareCommand(o, out, err);
  EXPECT_NE(code, kExitError) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("bencher/benchmarks"));
}

}  // namespace
}  // namespace perfgate::cli
