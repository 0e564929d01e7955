// Result files into the store over real processes: a private PostgreSQL, the
// coordinator binary on a loopback port, `perfgate ingest` sending a Google
// Benchmark file and a file written by `perfgate-agent run --offline
// --output`, `perfgate run ID` showing what was stored, and `perfgate compare`
// judging two stored runs.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "formats/result_file.h"
#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate {
namespace {

using testing::ChildProcess;
using testing::CommandResult;
using testing::RunCommand;
using testing::TempDir;

using testing::Bin;

std::string Fixture(const std::string& name) { return std::string(PERFGATE_FORMATS_DIR) + "/" + name; }

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

}  // namespace
}  // namespace perfgate
