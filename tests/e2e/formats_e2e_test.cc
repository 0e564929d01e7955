// Every result format through the real binaries: `perfgate ingest` stores a
// file of each (Google Benchmark, nvbench, pytest-benchmark and hyperfine
// written by the tools, nccl-tests and Bencher's format printed from their
// documented fields) with every sample, `perfgate compare` judges two files of
// each, `perfgate export --format bmf` writes each as BMF; a malformed file of
// each is refused naming the file and the field or line, with nothing stored.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "formats/result_file.h"
#include "tests/formats/format_test_support.h"
#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate {
namespace {

using nlohmann::json;
using testing::Bin;
using testing::ChildProcess;
using testing::RunCommand;
using testing::Slurp;
using testing::WriteText;

std::string Fixture(const std::string& name) { return std::string(PERFGATE_FORMATS_DIR) + "/" + name; }

struct FormatFile {
  std::string format;  // ResultSet::format
  std::string path;
  std::string bad;      // a malformed file of that format
  std::string refusal;  // what the refusal names (after the file's path)
};

class FormatsEndToEnd : public testing::PostgresDirTest {
 protected:
  // One file of each format, and a malformed copy of each.
  std::vector<FormatFile> Files() {
    std::vector<FormatFile> files;
    auto add = [&](const std::string& format, const std::string& path, const std::string& bad_text,
                   const std::string& refusal) {
      const std::string bad = dir_->Join("bad-" + format);
      WriteText(bad, bad_text);
      files.push_back({format, path, bad, refusal});
    };
    json gbench = json::parse(Slurp(Fixture("gbench_repetitions.json")));
    gbench["benchmarks"][1].erase("real_time");
    add("google-benchmark", Fixture("gbench_repetitions.json"), gbench.dump(), ": benchmarks[1].real_time: missing");
    json nvbench = json::parse(Slurp(Fixture("nvbench_summary.json")));
    nvbench["devices"][0].erase("name");
    add("nvbench", Fixture("nvbench_summary.json"), nvbench.dump(), ": devices[0].name: missing");
    const std::string pytest = testing::RunPytest(*dir_, PERFGATE_SYSTEM_PYTHON);
    json py = json::parse(Slurp(pytest));
    py["benchmarks"][0]["stats"]["data"][0] = "slow";
    add("pytest-benchmark", pytest, py.dump(), ": benchmarks[0].stats.data[0]: not a number");
    const std::string hyperfine = testing::RunHyperfine(*dir_);
    json hf = json::parse(Slurp(hyperfine));
    hf["results"][1]["times"] = 3;
    add("hyperfine", hyperfine, hf.dump(), ": results[1].times: not an array");
    const std::string nccl = dir_->Join("all_reduce.txt");
    const std::vector<testing::NcclRow> rows = {{1024, 256, "float", "sum", -1, {12.5, 0.08, 0.08, "0"}, {12.25, 0.08, 0.08, "0"}},
                                                {4096, 1024, "float", "sum", -1, {13.5, 0.3, 0.3, "0"}, {13.25, 0.31, 0.31, "0"}}};
    WriteText(nccl, testing::NcclOutput(rows));
    std::string nccl_bad = testing::NcclOutput(rows);
    nccl_bad.replace(nccl_bad.find("13.50"), 5, "  x.y");
    add("nccl-tests", nccl, nccl_bad, ": line 13: time 'x.y' is not a non-negative number");
    const std::string bmf = dir_->Join("bmf.json");
    WriteText(bmf, json{{"parse", {{"latency", {{"value", 1500.0}}}, {"throughput", {{"value", 2e5}}}}}}.dump());
    add("bencher-bmf", bmf, json{{"parse", {{"latency", {{"value", "fast"}}}}}}.dump(),
        ": parse.latency.value: not a number");
    return files;
  }

  void StartCoordinator() {
    auto started = testing::StartCoordinator(ConnInfo(), dir_->Join("coordinator.log"));
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(started->process);
    address_ = started->address;
  }

  testing::CommandResult Perfgate(std::vector<std::string> args) {
    args.insert(args.begin(), Bin("cli/perfgate"));
    auto r = RunCommand(args);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : testing::CommandResult{};
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

TEST_F(FormatsEndToEnd, AFileOfEachFormatIsStoredWithEverySampleOfEveryCase) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  for (const FormatFile& f : Files()) {
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
}

TEST_F(FormatsEndToEnd, AMalformedFileOfEachFormatIsRefusedNamingItAndNothingIsStored) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  for (const FormatFile& f : Files()) {
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

TEST_F(FormatsEndToEnd, TwoFilesOfEachFormatAreComparedAndEachExportsAsBencherJson) {
  for (const FormatFile& f : Files()) {
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
}  // namespace perfgate
