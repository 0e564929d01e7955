// Result files into the store over real processes: a private PostgreSQL, the
// coordinator binary on a loopback port, `perfgate ingest` sending a Google
// Benchmark file and a file written by `perfgate-agent run --offline
// --output`, `perfgate run ID` showing what was stored, and `perfgate compare`
// judging two stored runs. Then a file of every format (Google Benchmark,
// nvbench, pytest-benchmark and hyperfine written by the tools, nccl-tests and
// Bencher's format printed from their documented fields) through ingest,
// compare and export, and a malformed file of each refused naming the file
// and the field or line, with nothing stored.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "formats/result_file.h"
#include "tests/formats/format_test_support.h"
#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::ingest_e2e_test {
namespace {

using testing::ChildProcess;
using testing::Fixture;
using testing::CommandResult;
using testing::RunCommand;
using testing::Slurp;
using testing::TempDir;
using testing::WriteText;

using testing::Bin;
using nlohmann::json;

class IngestEndToEnd : public testing::PostgresDirTest {
 protected:
  void StartCoordinator() {
    auto started = testing::StartCoordinator(ConnInfo(), dir_->Join("coordinator.log"));
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(started->process);
    address_ = started->address;
  }

  // Runs `perfgate ingest`; the run id it printed, or "" (with a failure).
  std::string Ingest(const std::string& file, const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {Bin("cli/perfgate"), "ingest", file,   "--coordinator",
                                     address_,            "--branch", "main", "--commit",
                                     "c0ffee"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto r = RunCommand(argv);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return "";
    EXPECT_EQ(r->exit_code, 0) << r->output << "\n--- coordinator log ---\n" << coordinator_->OutputTail();
    std::smatch m;
    if (!std::regex_search(r->output, m, std::regex("run_id: ([0-9a-f-]{36})"))) {
      ADD_FAILURE() << "no run id in: " << r->output;
      return "";
    }
    return m[1].str();
  }

  // `perfgate run ID`'s output.
  std::string Show(const std::string& run_id) {
    auto r = RunCommand({Bin("cli/perfgate"), "--coordinator", address_, "run", run_id});
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return "";
    EXPECT_EQ(r->exit_code, 0) << r->output;
    return r->output;
  }

  // `perfgate ARGS...`, whatever its exit code.
  CommandResult Perfgate(std::vector<std::string> args) {
    args.insert(args.begin(), Bin("cli/perfgate"));
    auto r = RunCommand(args);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  std::unique_ptr<ChildProcess> coordinator_;
  std::string address_;
};

// The sample count `perfgate run` shows for a case's metric ("n" column).
int ShownSamples(const std::string& shown, const std::string& key, const std::string& metric) {
  std::istringstream lines(shown);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string benchmark, name, median, unit, noise;
    int n = -1;
    if (words >> benchmark >> name >> median >> unit >> noise >> n && benchmark == key && name == metric) return n;
  }
  return -1;
}

TEST_F(IngestEndToEnd, GoogleBenchmarkFileIsStoredAsACompleteRunWithEveryRepetition) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const std::string file = Fixture("gbench_repetitions.json");
  const std::string run = Ingest(file, {"--sku", "cpu-amd-epyc-7b13", "--node", "bench-host-3"});
  ASSERT_FALSE(run.empty());
  const std::string shown = Show(run);
  EXPECT_NE(shown.find("RUN_COMPLETE"), std::string::npos) << shown;
  EXPECT_NE(shown.find("sku cpu-amd-epyc-7b13 node bench-host-3"), std::string::npos) << shown;
  EXPECT_NE(shown.find("result_file_format: google-benchmark"), std::string::npos) << shown;

  auto expected = ReadResultFile(file);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_NE(shown.find("host_name: " + expected->context.at("host_name")), std::string::npos) << shown;
  for (const CaseResult& c : expected->cases) {
    for (const MetricSpec& m : c.metrics) {
      EXPECT_EQ(ShownSamples(shown, c.benchmark.Key(), m.name), static_cast<int>(c.samples.size()))
          << c.benchmark.Key() << " " << m.name << "\n" << shown;
    }
  }
}

TEST_F(IngestEndToEnd, AgentResultFileWrittenOfflineIsStoredWithItsSku) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const std::string out = dir_->Join("agent-results.json");
  auto agent = RunCommand({Bin("agent/perfgate-agent"), "run", "--offline", "--output", out, "--filter",
                           "kernels/copy*", "--set", "bytes=1048576", "--min-time", "0.1", "--timeout", "1",
                           "--spool", dir_->Join("spool")},
                          {}, std::chrono::minutes(2));
  ASSERT_TRUE(agent.ok()) << agent.status();
  ASSERT_EQ(agent->exit_code, 0) << agent->output;
  // Nothing was spooled: there was no coordinator to send it to.
  EXPECT_FALSE(std::filesystem::exists(dir_->Join("spool")));

  auto written = ReadResultFile(out);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->cases.size(), 1u);
  const CaseResult& c = written->cases[0];
  const std::string run = Ingest(out, {});
  ASSERT_FALSE(run.empty());
  const std::string shown = Show(run);
  EXPECT_NE(shown.find("RUN_COMPLETE"), std::string::npos) << shown;
  EXPECT_NE(shown.find("sku " + written->sku + " "), std::string::npos) << shown;
  size_t unthrottled = 0;
  for (const Sample& s : c.samples) unthrottled += s.throttled ? 0 : 1;
  for (const MetricSpec& m : c.metrics) {
    EXPECT_EQ(ShownSamples(shown, c.benchmark.Key(), m.name), static_cast<int>(unthrottled)) << shown;
  }
}

TEST_F(IngestEndToEnd, FileWithoutASkuIsRefusedAndNothingIsStored) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  auto r = RunCommand({Bin("cli/perfgate"), "ingest", Fixture("gbench_repetitions.json"), "--coordinator",
                       address_, "--branch", "main", "--commit", "c0ffee"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 2) << r->output;
  EXPECT_NE(r->output.find("names no SKU; pass --sku"), std::string::npos) << r->output;
  auto runs = RunCommand({Bin("cli/perfgate"), "--coordinator", address_, "runs"});
  ASSERT_TRUE(runs.ok()) << runs.status();
  EXPECT_EQ(runs->output.find("main"), std::string::npos) << runs->output;
}

// Bencher Metric Format whose benchmarks are named "benchmarks" and
// "context" has the shape of Google Benchmark's JSON: detection refuses it,
// --format bencher-bmf stores it.
TEST_F(IngestEndToEnd, NamedFormatStoresAFileThatDetectionRefuses) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const std::string file = dir_->Join("bmf.json");
  WriteText(file, json{{"benchmarks", {{"latency", {{"value", 12.5}}}}},
                       {"context", {{"latency", {{"value", 3.0}}}}}}
                      .dump());
  auto refused = RunCommand({Bin("cli/perfgate"), "ingest", file, "--coordinator", address_, "--branch", "main",
                             "--commit", "c0ffee", "--sku", "cpu-x"});
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->exit_code, 2) << refused->output;
  EXPECT_NE(refused->output.find(file + ": benchmarks"), std::string::npos) << refused->output;
  const std::string run = Ingest(file, {"--sku", "cpu-x", "--format", "bencher-bmf"});
  ASSERT_FALSE(run.empty());
  auto shown = RunCommand({Bin("cli/perfgate"), "--coordinator", address_, "run", run});
  ASSERT_TRUE(shown.ok()) << shown.status();
  EXPECT_NE(shown->output.find("bencher/benchmarks"), std::string::npos) << shown->output;
  EXPECT_NE(shown->output.find("bencher/context"), std::string::npos) << shown->output;
}

TEST_F(IngestEndToEnd, CompareOfTwoStoredRunsJudgesThemAsOneProcessEachAndStoresTheReport) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const std::string baseline_file = Fixture("gbench_repetitions.json");
  nlohmann::json doc;
  std::ifstream(baseline_file) >> doc;
  for (nlohmann::json& row : doc["benchmarks"]) row["real_time"] = row["real_time"].get<double>() * 1.1;
  const std::string candidate_file = dir_->Join("gbench_slower.json");
  std::ofstream(candidate_file) << doc.dump();
  const std::string baseline = Ingest(baseline_file, {"--sku", "cpu-amd-epyc-7b13"});
  const std::string candidate = Ingest(candidate_file, {"--sku", "cpu-amd-epyc-7b13"});
  ASSERT_FALSE(baseline.empty());
  ASSERT_FALSE(candidate.empty());

  // Each file is one run of the binary: its five repetitions share that
  // process's luck, so 10 % slower repetitions are not yet a regression.
  const std::string policy = dir_->Join("policy.yaml");
  std::ofstream(policy) << "version: 1\ndefaults:\n  fdr: 5%\n";
  auto r = RunCommand({Bin("cli/perfgate"), "compare", baseline, candidate, "--coordinator", address_,
                       "--policy", policy});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3) << r->output << "\n--- coordinator log ---\n" << coordinator_->OutputTail();
  EXPECT_NE(r->output.find("candidate run " + candidate), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("A/B baseline side " + baseline), std::string::npos) << r->output;
  EXPECT_NE(r->output.find("too few runs"), std::string::npos) << r->output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r->output, m, std::regex("report (\\d+) stored"))) << r->output;
  auto again = RunCommand({Bin("cli/perfgate"), "--coordinator", address_, "report", m[1].str()});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->exit_code, 3) << again->output;
}

struct FormatFile {
  std::string format;  // ResultSet::format
  std::string path;
  std::string bad;      // a malformed file of that format
  std::string refusal;  // what the refusal names (after the file's path)
};

// One file of each format, and a malformed copy of each.
std::vector<FormatFile> FilesOfEachFormat(const TempDir& dir) {
  std::vector<FormatFile> files;
  auto add = [&](const std::string& format, const std::string& path, const std::string& bad_text,
                 const std::string& refusal) {
    const std::string bad = dir.Join("bad-" + format);
    WriteText(bad, bad_text);
    files.push_back({format, path, bad, refusal});
  };
  json gbench = json::parse(Slurp(Fixture("gbench_repetitions.json")));
  gbench["benchmarks"][1].erase("real_time");
  add("google-benchmark", Fixture("gbench_repetitions.json"), gbench.dump(), ": benchmarks[1].real_time: missing");
  json nvbench = json::parse(Slurp(Fixture("nvbench_summary.json")));
  nvbench["devices"][0].erase("name");
  add("nvbench", Fixture("nvbench_summary.json"), nvbench.dump(), ": devices[0].name: missing");
  const std::string pytest = testing::RunPytest(dir, PERFGATE_SYSTEM_PYTHON);
  json py = json::parse(Slurp(pytest));
  py["benchmarks"][0]["stats"]["data"][0] = "slow";
  add("pytest-benchmark", pytest, py.dump(), ": benchmarks[0].stats.data[0]: not a number");
  const std::string hyperfine = testing::RunHyperfine(dir);
  json hf = json::parse(Slurp(hyperfine));
  hf["results"][1]["times"] = 3;
  add("hyperfine", hyperfine, hf.dump(), ": results[1].times: not an array");
  const std::string nccl = dir.Join("all_reduce.txt");
  const std::vector<testing::NcclRow> rows = {
      {1024, 256, "float", "sum", -1, {12.5, 0.08, 0.08, "0"}, {12.25, 0.08, 0.08, "0"}},
      {4096, 1024, "float", "sum", -1, {13.5, 0.3, 0.3, "0"}, {13.25, 0.31, 0.31, "0"}}};
  WriteText(nccl, testing::NcclOutput(rows));
  std::string nccl_bad = testing::NcclOutput(rows);
  nccl_bad.replace(nccl_bad.find("13.50"), 5, "  x.y");
  add("nccl-tests", nccl, nccl_bad, ": line 13: time 'x.y' is not a non-negative number");
  const std::string bmf = dir.Join("bmf.json");
  WriteText(bmf, json{{"parse", {{"latency", {{"value", 1500.0}}}, {"throughput", {{"value", 2e5}}}}}}.dump());
  add("bencher-bmf", bmf, json{{"parse", {{"latency", {{"value", "fast"}}}}}}.dump(),
      ": parse.latency.value: not a number");
  return files;
}

TEST_F(IngestEndToEnd, AFileOfEachFormatIsStoredWithEverySampleOfEveryCase) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  for (const FormatFile& f : FilesOfEachFormat(*dir_)) {
    auto expected = ReadResultFile(f.path);
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_EQ(expected->format, f.format);
    const auto r = Perfgate({"ingest", f.path, "--coordinator", address_, "--branch", "main", "--commit", "c0ffee",
                             "--sku", "cpu-amd-epyc-7b13", "--node", "host-1"});
    ASSERT_EQ(r.exit_code, 0) << f.format << ": " << r.output << "\n" << coordinator_->OutputTail();
    for (const std::string& note : expected->notes) {
      EXPECT_NE(r.output.find("note: " + f.path + ": " + note), std::string::npos) << r.output;
    }
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex("run_id: ([0-9a-f-]{36})"))) << r.output;
    const auto shown = Perfgate({"--coordinator", address_, "run", m[1].str()});
    EXPECT_NE(shown.output.find("result_file_format: " + f.format), std::string::npos) << shown.output;
    for (const CaseResult& c : expected->cases) {
      if (c.samples.empty()) continue;
      for (const MetricSpec& metric : c.metrics) {
        EXPECT_EQ(ShownSamples(shown.output, c.benchmark.Key(), metric.name), static_cast<int>(c.samples.size()))
            << f.format << " " << c.benchmark.Key() << " " << metric.name << "\n" << shown.output;
      }
    }
  }
  // What a reader approximated is told: aggregates stand in for repetitions.
  const std::string aggregates = Fixture("gbench_aggregates_only.json");
  const auto r = Perfgate({"ingest", aggregates, "--coordinator", address_, "--branch", "main", "--commit", "c0ffee",
                           "--sku", "cpu-amd-epyc-7b13"});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("note: " + aggregates + ": "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--benchmark_report_aggregates_only"), std::string::npos) << r.output;
}

TEST_F(IngestEndToEnd, AMalformedFileOfEachFormatIsRefusedNamingItAndNothingIsStored) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  for (const FormatFile& f : FilesOfEachFormat(*dir_)) {
    const auto r = Perfgate({"ingest", f.bad, "--coordinator", address_, "--branch", "main", "--commit", "c0ffee",
                             "--sku", "cpu-amd-epyc-7b13"});
    EXPECT_EQ(r.exit_code, 2) << f.format << ": " << r.output;
    EXPECT_NE(r.output.find(f.bad + f.refusal), std::string::npos) << f.format << ": " << r.output;
    const auto compared = Perfgate({"compare", f.path, f.bad});
    EXPECT_EQ(compared.exit_code, 2) << f.format << ": " << compared.output;
    EXPECT_NE(compared.output.find(f.bad + f.refusal), std::string::npos) << compared.output;
  }
  const auto runs = Perfgate({"--coordinator", address_, "runs"});
  EXPECT_EQ(runs.output.find("main"), std::string::npos) << runs.output;
}

TEST_F(IngestEndToEnd, TwoFilesOfEachFormatAreComparedAndEachExportsAsBencherJson) {
  for (const FormatFile& f : FilesOfEachFormat(*dir_)) {
    // One file a side is one process a side: too few runs for a verdict (3).
    const auto r = Perfgate({"compare", f.path, f.path, "--sku", "cpu-amd-epyc-7b13"});
    EXPECT_EQ(r.exit_code, 3) << f.format << ": " << r.output;
    EXPECT_EQ(r.output.find("perfgate:"), std::string::npos) << r.output;
    const std::string out = dir_->Join(f.format + ".bmf.json");
    const auto exported = Perfgate({"export", "--format", "bmf", f.path, "--output", out});
    ASSERT_EQ(exported.exit_code, 0) << exported.output;
    auto original = ReadResultFile(f.path);
    auto back = ReadResultFile(out);
    ASSERT_TRUE(original.ok() && back.ok()) << back.status();
    EXPECT_EQ(back->format, "bencher-bmf");
    size_t with_samples = 0;
    for (const CaseResult& c : original->cases) {
      if (c.samples.empty()) continue;
      ++with_samples;
      EXPECT_NE(testing::FindCase(*back, c.benchmark.Key()), nullptr) << f.format << " " << c.benchmark.Key();
    }
    EXPECT_EQ(back->cases.size(), with_samples) << f.format;
  }
}

}  // namespace
}  // namespace perfgate::ingest_e2e_test
