// Google Benchmark files of every layout since 1.0: a real program's output
// (Debian's libbenchmark) with repetitions and with aggregates only, and the
// older layouts, errors, skips and time units built from json_reporter.cc's
// fields.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "formats/result_file.h"
#include "tests/formats/format_test_support.h"

namespace perfgate {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

// Runs the fixture program (tests/data/formats/gbench_fixture.cc) with `flags`;
// the JSON it wrote.
std::string RunFixture(const perfgate::testing::TempDir& dir, const std::vector<std::string>& flags) {
  const std::string out = dir.Join("gbench.json");
  std::vector<std::string> argv = {PERFGATE_GBENCH_FIXTURE, "--benchmark_min_time=0.005",
                                   "--benchmark_out=" + out, "--benchmark_out_format=json"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  testing::MustRun(argv);
  return out;
}

TEST(GoogleBenchmarkProgram, EachRepetitionOfARealRunIsASampleAndTheErrorFailsItsCase) {
  const auto dir = testing::Scratch();
  const std::string file = RunFixture(dir, {"--benchmark_repetitions=3"});
  auto set = ReadResultFile(file);
  ASSERT_TRUE(set.ok()) << set.status();
  const json doc = json::parse(testing::Slurp(file));
  std::map<std::string, size_t> repetitions;  // run_name -> iteration rows
  std::map<std::string, std::string> errors;
  double own_seconds = 0;  // iterations x real_time of every repetition, in seconds
  const std::map<std::string, double> kScale = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
  for (const json& b : doc["benchmarks"]) {
    if (b["run_type"] != "iteration") continue;
    if (b.value("error_occurred", false)) {
      errors[b["run_name"]] = b["error_message"];
      continue;
    }
    ++repetitions[b["run_name"]];
    own_seconds +=
        b["iterations"].get<double>() * b["real_time"].get<double>() * kScale.at(b["time_unit"]);
  }
  ASSERT_FALSE(errors.empty());  // BM_NeedsDevice calls SkipWithError
  EXPECT_EQ(set->cases.size(), repetitions.size() + errors.size());
  double read_seconds = 0;  // the cases' own timed seconds, which size A/B blocks
  for (const CaseResult& c : set->cases) {
    if (c.status == CaseStatus::kFailed) {
      EXPECT_TRUE(c.samples.empty());
      EXPECT_EQ(c.reason, errors.at(c.benchmark.name));
      continue;
    }
    EXPECT_EQ(c.status, CaseStatus::kOk);
    EXPECT_EQ(c.samples.size(), 3u) << c.benchmark.Key();
    read_seconds += c.sample_seconds;
    EXPECT_EQ(c.metrics[testing::MetricIndex(c, "real_time")].direction, Direction::kLowerIsBetter);
  }
  EXPECT_NEAR(read_seconds, own_seconds, 1e-9 * own_seconds);
  EXPECT_GT(read_seconds, 0);
  EXPECT_TRUE(set->notes.empty());
}

TEST(GoogleBenchmarkProgram, AggregatesOnlyGiveOneSampleFromTheMedianWithANote) {
  const auto dir = testing::Scratch();
  const std::string file = RunFixture(
      dir, {"--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true", "--benchmark_filter=BM_Copy"});
  auto set = ReadResultFile(file);
  ASSERT_TRUE(set.ok()) << set.status();
  const json doc = json::parse(testing::Slurp(file));
  size_t medians = 0;
  for (const json& b : doc["benchmarks"]) {
    EXPECT_EQ(b["run_type"], "aggregate");
    if (b["aggregate_name"] != "median") continue;
    ++medians;
    const CaseResult* c = testing::FindCase(*set, "gbench/BM_Copy{a0=" + b["run_name"].get<std::string>().substr(8) + "}");
    ASSERT_NE(c, nullptr) << b["run_name"];
    ASSERT_EQ(c->samples.size(), 1u);
    EXPECT_DOUBLE_EQ(c->samples[0].values[testing::MetricIndex(*c, "real_time")], b["real_time"].get<double>());
  }
  EXPECT_EQ(set->cases.size(), medians);
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("--benchmark_report_aggregates_only"));
}

json Row(const std::string& name, double real, const std::string& unit = "") {
  json b = {{"name", name}, {"iterations", 1000}, {"real_time", real}, {"cpu_time", real}};
  if (!unit.empty()) b["time_unit"] = unit;
  return b;
}

// The 1.0-to-1.4 layout (the shape of compare.py's test1_run1.json): no
// run_name, run_type or (1.0) time_unit; aggregates and complexity rows only
// by their names' suffixes.
TEST(GoogleBenchmarkFile, OfTheOldestLayoutTellsAggregatesAndComplexityRowsByName) {
  json doc = {{"context", {{"date", "2016-08-02 17:44:46"}, {"num_cpus", 4}}}, {"benchmarks", json::array()}};
  json& rows = doc["benchmarks"];
  const std::vector<double> reps = {10, 11, 12};
  for (double r : reps) rows.push_back(Row("BM_Old", r));
  rows.push_back(Row("BM_Old_mean", 11));
  rows.push_back(Row("BM_Old_stddev", 1));
  rows.push_back(Row("BM_Lone_mean", 7));  // a benchmark of that name: nothing else of BM_Lone
  for (int n : {8, 64}) rows.push_back(Row("BM_Fit/" + std::to_string(n), n * 2.0));
  rows.push_back({{"name", "BM_Fit_BigO"}, {"cpu_coefficient", 2.0}, {"real_coefficient", 2.0}, {"big_o", "N"}});
  rows.push_back({{"name", "BM_Fit_RMS"}, {"rms", 0.01}});
  auto set = ParseResultText(doc.dump(), "old.json");
  ASSERT_TRUE(set.ok()) << set.status();
  const CaseResult* old = testing::FindCase(*set, "gbench/BM_Old");
  ASSERT_NE(old, nullptr);
  ASSERT_EQ(old->samples.size(), reps.size());
  for (size_t i = 0; i < reps.size(); ++i) EXPECT_EQ(old->samples[i].values[0], reps[i]);
  EXPECT_EQ(old->metrics[0].unit, "ns");  // 1.0 wrote nanoseconds and no unit
  ASSERT_NE(testing::FindCase(*set, "gbench/BM_Lone_mean"), nullptr);
  ASSERT_NE(testing::FindCase(*set, "gbench/BM_Fit{a0=8}"), nullptr);
  EXPECT_EQ(testing::FindCase(*set, "gbench/BM_Fit"), nullptr);
  EXPECT_EQ(set->cases.size(), 4u);
  // BM_Lone_mean is told from an aggregate only once every name is read:
  // its case still keeps its place in the file's order.
  EXPECT_EQ(set->cases[1].benchmark.Key(), "gbench/BM_Lone_mean");
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("skipped 2 complexity rows"));
  EXPECT_THAT(set->notes[0], HasSubstr("BM_Fit_BigO"));
}

// The 1.5+ layout names complexity rows with aggregate_name BigO and RMS.
TEST(GoogleBenchmarkFile, ComplexityRowsOfTheNewLayoutAreSkippedWithANote) {
  json doc = {{"context", json::object()}, {"benchmarks", json::array()}};
  json it = Row("BM_Fit/8", 16, "ns");
  it.update({{"run_name", "BM_Fit/8"}, {"run_type", "iteration"}, {"repetition_index", 0}});
  doc["benchmarks"].push_back(it);
  doc["benchmarks"].push_back({{"name", "BM_Fit_BigO"}, {"run_name", "BM_Fit"}, {"run_type", "aggregate"},
                               {"aggregate_name", "BigO"}, {"cpu_coefficient", 2.0}, {"big_o", "N"}});
  doc["benchmarks"].push_back({{"name", "BM_Fit_RMS"}, {"run_name", "BM_Fit"}, {"run_type", "aggregate"},
                               {"aggregate_name", "RMS"}, {"rms", 0.01}});
  auto set = ParseResultText(doc.dump(), "new.json");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->cases.size(), 1u);
  EXPECT_EQ(set->cases[0].benchmark.Key(), "gbench/BM_Fit{a0=8}");
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("complexity rows"));
}

TEST(GoogleBenchmarkFile, EveryTimeUnitIsKeptAsTheMetricsUnit) {
  json doc = {{"context", json::object()}, {"benchmarks", json::array()}};
  const std::vector<std::string> units = {"ns", "us", "ms", "s"};
  for (const std::string& u : units) doc["benchmarks"].push_back(Row("BM_" + u, 2.5, u));
  auto set = ParseResultText(doc.dump(), "units.json");
  ASSERT_TRUE(set.ok()) << set.status();
  for (const std::string& u : units) {
    const CaseResult* c = testing::FindCase(*set, "gbench/BM_" + u);
    ASSERT_NE(c, nullptr) << u;
    EXPECT_EQ(c->metrics[testing::MetricIndex(*c, "real_time")].unit, u);
    EXPECT_EQ(c->metrics[testing::MetricIndex(*c, "cpu_time")].unit, u);
    EXPECT_EQ(c->samples[0].values[0], 2.5);
  }
  doc["benchmarks"][0]["time_unit"] = "min";
  auto refused = ParseResultText(doc.dump(), "units.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("units.json: benchmarks[0].time_unit: 'min' is not one of"));
}

// 1.8 on: state.SkipWithMessage writes "skipped": true and "skip_message".
TEST(GoogleBenchmarkFile, ASkippedRunIsASkippedCaseWithItsMessage) {
  json doc = {{"context", json::object()}, {"benchmarks", json::array()}};
  json skipped = Row("BM_Gpu", 0, "ns");
  skipped.update({{"run_name", "BM_Gpu"}, {"run_type", "iteration"}, {"skipped", true},
                  {"skip_message", "no device"}});
  doc["benchmarks"].push_back(skipped);
  doc["benchmarks"].push_back(Row("BM_Cpu", 3, "ns"));
  auto set = ParseResultText(doc.dump(), "skip.json");
  ASSERT_TRUE(set.ok()) << set.status();
  const CaseResult* c = testing::FindCase(*set, "gbench/BM_Gpu");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CaseStatus::kSkipped);
  EXPECT_EQ(c->reason, skipped["skip_message"]);
  EXPECT_TRUE(c->samples.empty());
  doc["benchmarks"][0]["skipped"] = "maybe";
  auto refused = ParseResultText(doc.dump(), "skip.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("skip.json: benchmarks[0].skipped: not true or false"));
}

// compare.py's test3_run0.json shape: aggregates with no aggregate_name.
TEST(GoogleBenchmarkFile, ACaseOfUnnamedAggregatesAloneIsSkippedNotDropped) {
  json doc = {{"context", json::object()}, {"benchmarks", json::array()}};
  json agg = Row("short", 8, "ns");
  agg["run_type"] = "aggregate";
  doc["benchmarks"] = {agg, agg, Row("medium", 8, "ns")};
  auto set = ParseResultText(doc.dump(), "agg.json");
  ASSERT_TRUE(set.ok()) << set.status();
  const CaseResult* c = testing::FindCase(*set, "gbench/short");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->status, CaseStatus::kSkipped);
  EXPECT_THAT(c->reason, HasSubstr("no median or mean"));
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("short"));
}

// The resident memory of this process now, in bytes (VmRSS).
long ResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6)) * 1024;
  }
  return 0;
}

// 2·10^6 repetitions (411 MB) took 3.4 GB as one nlohmann tree. A file of
// 100 000 repetitions as Google Benchmark writes them (about 30 MB) is read
// in a child process, whose peak resident memory (ru_maxrss), less what it
// shared with this one at the fork, must stay under twice the file's size:
// the text itself and the samples, no tree of the whole.
TEST(GoogleBenchmarkFile, OfManyRepetitionsIsReadWithinTwiceItsSizeInMemory) {
  const testing::TempDir dir = testing::Scratch();
  const std::string path = dir.Join("reps.json");
  constexpr int kReps = 100000;
  {
    std::ofstream f(path);
    f << R"({"context": {"date": "2026-11-27T12:00:00+00:00", "host_name": "ci", "num_cpus": 2}, "benchmarks": [)";
    for (int i = 0; i < kReps; ++i) {
      f << (i ? ",\n" : "\n") << R"({"name": "BM_Copy/4096", "family_index": 0, "per_family_instance_index": 0, )"
        << R"("run_name": "BM_Copy/4096", "run_type": "iteration", "repetitions": )" << kReps
        << R"(, "repetition_index": )" << i << R"(, "threads": 1, "iterations": 160000, "real_time": )"
        << 4.25 + (i % 97) * 0.001 << R"(, "cpu_time": 4.2401, "time_unit": "ns", "bytes_per_second": 9.6e+11})";
    }
    f << "\n]}\n";
  }
  const double size = static_cast<double>(std::filesystem::file_size(path));
  const long before = ResidentBytes();
  std::fflush(nullptr);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    auto set = ReadResultFile(path);
    const bool read = set.ok() && set->cases.size() == 1 && set->cases[0].samples.size() == kReps;
    _exit(read ? 0 : 1);
  }
  int status = 0;
  rusage usage{};
  ASSERT_EQ(wait4(pid, &status, 0, &usage), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child did not read every repetition";
  const double grown = static_cast<double>(usage.ru_maxrss) * 1024 - static_cast<double>(before);
  std::cout << "a " << size / 1e6 << " MB file of " << kReps << " repetitions: peak resident memory grew by "
            << grown / 1e6 << " MB (" << grown / size << " x the file)\n";
  EXPECT_LT(grown, 2 * size);
}

}  // namespace
}  // namespace perfgate
