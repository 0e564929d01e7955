#include "formats/result_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <sstream>

#include "common/identity.h"
#include "tests/formats/format_test_support.h"
#include "tests/support/processes.h"

namespace perfgate {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;
using perfgate::testing::FindCase;
using perfgate::testing::Fixture;
using perfgate::testing::MetricIndex;
using perfgate::testing::Scratch;
using perfgate::testing::Slurp;

json FixtureJson(const std::string& name) { return json::parse(Slurp(Fixture(name))); }

RunMeta SomeMeta() {
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = "node-7";
  meta.environment.sku = "h100-sxm5-80gb";
  meta.environment.fields = {{"driver_version", "580.65"}, {"gpu_name", "NVIDIA H100 80GB HBM3"}};
  meta.repo = "github.com/org/repo";
  meta.branch = "main";
  meta.commit = "0123456789abcdef";
  meta.trigger = Trigger::kCi;
  meta.ci_job = "job-42";
  meta.node = "node-7";
  meta.started_at = std::chrono::system_clock::from_time_t(1'790'000'000);
  meta.parent_commits = {"fedcba"};
  return meta;
}

std::vector<CaseResult> SomeCases() {
  CaseResult ok;
  ok.benchmark = {"kernels", "copy", {{"bytes", "268435456"}, {"dtype", "f32"}}};
  ok.metrics = {{"time", "ms", Direction::kLowerIsBetter}, {"bandwidth", "GB/s", Direction::kHigherIsBetter}};
  ok.samples = {{0, {1.0 / 3.0, 2987.123456789}, false}, {1, {0.3400000001, 2950.5}, true},
                {2, {0.33, 3001.0}, false}};
  ok.status = CaseStatus::kOk;
  ok.noise = 0.0123;
  ok.seconds = 1.75;
  ok.sample_seconds = 1.0;
  CaseResult skipped;
  skipped.benchmark = {"kernels", "fp8_gemm", {}};
  skipped.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  skipped.status = CaseStatus::kSkipped;
  skipped.reason = "needs sm_90a";
  // A knee above the rates swept: skipped, with the bound it gives.
  CaseResult knee = skipped;
  knee.benchmark.name = "serve_knee";
  knee.metrics[0] = {"knee_rate", "requests/s", Direction::kHigherIsBetter};
  knee.bound = ValueBound{"knee_rate", ValueBound::Kind::kAtLeast, 2000};
  return {ok, skipped, knee};
}

TEST(PerfgateResultFile, ReadsBackEveryCaseMetricAndSampleItWrote) {
  const RunMeta meta = SomeMeta();
  const std::vector<CaseResult> cases = SomeCases();
  auto set = ParseResultText(WriteResultJson(meta, cases), "run.json");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->format, "perfgate");
  EXPECT_EQ(set->sku, meta.environment.sku);
  ASSERT_EQ(set->cases.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& want = cases[i];
    const CaseResult& got = set->cases[i];
    EXPECT_EQ(got.benchmark, want.benchmark);
    EXPECT_EQ(got.metrics, want.metrics);
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.reason, want.reason);
    EXPECT_EQ(got.noise, want.noise);
    EXPECT_EQ(got.seconds, want.seconds);
    EXPECT_EQ(got.sample_seconds, want.sample_seconds);
    EXPECT_EQ(got.bound, want.bound);
    ASSERT_EQ(got.samples.size(), want.samples.size());
    for (size_t s = 0; s < want.samples.size(); ++s) {
      EXPECT_EQ(got.samples[s].index, want.samples[s].index);
      EXPECT_EQ(got.samples[s].values, want.samples[s].values);  // exact: doubles round-trip
      EXPECT_EQ(got.samples[s].throttled, want.samples[s].throttled);
    }
  }
  for (const auto& [k, v] : meta.environment.fields) EXPECT_EQ(set->context[k], v) << k;
  EXPECT_EQ(set->context["run.branch"], meta.branch);
  EXPECT_EQ(set->context["run.commit"], meta.commit);
  EXPECT_EQ(set->context["run.run_id"], meta.run_id);
}

TEST(PerfgateResultFile, IsWrittenWholeByRenameAndLeavesNoTemporaryFile) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string path = dir.Join("out.json");
  ASSERT_TRUE(WriteResultFile(path, SomeMeta(), SomeCases()).ok());
  auto set = ReadResultFile(path);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->cases.size(), SomeCases().size());
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    ++files;
    EXPECT_EQ(e.path().filename(), "out.json");
  }
  EXPECT_EQ(files, 1u);
}

TEST(PerfgateResultFile, WithAnUnknownVersionIsRefusedNamingTheVersion) {
  json doc = json::parse(WriteResultJson(SomeMeta(), SomeCases()));
  doc["version"] = 7;
  auto set = ParseResultText(doc.dump(), "future.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("future.json: version: 7"));
}

TEST(PerfgateResultFile, NumbersBeyondDoubleAreAClearErrorNotAnAbort) {
  const std::string text = WriteResultJson(SomeMeta(), SomeCases());
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"\"version\": 1", "\"version\": 1e400"}, {"\"values\": [", "\"values\": [1e999, "}}) {
    std::string bad = text;
    const size_t at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    bad.replace(at, from.size(), to);
    auto set = ParseResultText(bad, "huge.json");
    ASSERT_FALSE(set.ok()) << to;
    EXPECT_THAT(set.status().message(), HasSubstr("huge.json")) << to;
  }
}

TEST(PerfgateResultFile, AStartTimeBeyondTheClockOrOutOfRangeIsRefusedNamingIt) {
  json doc = json::parse(WriteResultJson(SomeMeta(), SomeCases()));
  for (const std::string bad : {"4052-11-20T10:00:00Z", "2026-13-01T00:00:00Z", "2026-01-31T25:00:00Z",
                                "1969-12-31T23:59:59Z", "2026-00-10T10:00:00Z", "2026-02-31T10:00:00Z"}) {
    doc["run"]["started_at"] = bad;
    auto set = ParseResultText(doc.dump(), "when.json");
    ASSERT_FALSE(set.ok()) << bad;
    EXPECT_THAT(set.status().message(), HasSubstr(bad));
  }
  doc["run"]["started_at"] = "2200-12-31T23:59:59Z";
  EXPECT_TRUE(ParseResultText(doc.dump(), "when.json").ok());
}

TEST(PerfgateResultFile, ASampleIndexBeyondTheStoredRangeIsRefusedNotWrapped) {
  json doc = json::parse(WriteResultJson(SomeMeta(), SomeCases()));
  doc["cases"][0]["samples"][1]["index"] = 4294967296ULL;  // 2^32, wrapped to 0 before
  auto set = ParseResultText(doc.dump(), "wrap.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("index: not an integer from 0 to 2147483647"));
}

TEST(PerfgateResultFile, ABenchmarkOutsideTheKeyGrammarIsRefused) {
  json doc = json::parse(WriteResultJson(SomeMeta(), SomeCases()));
  doc["cases"][0]["benchmark"]["suite"] = "ünï";
  auto set = ParseResultText(doc.dump(), "key.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("suite must be 1 to 128 characters"));
}

TEST(PerfgateResultFile, AWrongTypeDeepInsideIsRefusedNamingItsPath) {
  json doc = json::parse(WriteResultJson(SomeMeta(), SomeCases()));
  doc["cases"][0]["samples"][2]["values"][1] = "fast";
  auto set = ParseResultText(doc.dump(), "typed.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("typed.json: cases[0].samples[2].values[1]: not a number (string)"));
}

TEST(PerfgateResultFile, ABoundOfAnUnknownKindOrMetricOrBesideSamplesIsRefusedNamingIt) {
  const json doc = json::parse(WriteResultJson(SomeMeta(), SomeCases()));
  const auto refusal = [&](const std::function<void(json&)>& edit) {
    json d = doc;
    edit(d);
    auto set = ParseResultText(d.dump(), "bound.json");
    EXPECT_FALSE(set.ok());
    return set.ok() ? std::string() : std::string(set.status().message());
  };
  EXPECT_THAT(refusal([](json& d) { d["cases"][2]["bound"]["kind"] = "about"; }),
              HasSubstr("bound.json: cases[2].bound.kind: 'about' is neither at_least nor at_most"));
  EXPECT_THAT(refusal([](json& d) { d["cases"][2]["bound"]["metric"] = "time"; }),
              HasSubstr("cases[2].bound.metric: 'time' is none of the case's metrics"));
  EXPECT_THAT(refusal([](json& d) { d["cases"][0]["bound"] = d["cases"][2]["bound"]; }),
              HasSubstr("none of the case's metrics"));
  EXPECT_THAT(refusal([](json& d) {
                d["cases"][0]["bound"] = {{"metric", d["cases"][0]["metrics"][0]["name"]},
                                          {"kind", "at_most"}, {"value", 1.0}};
              }),
              HasSubstr("cases[0].bound: a case with samples gives values, not a bound"));
}

// `run --count` writes a case's count as a second entry of the case.
TEST(PerfgateResultFile, ACaseInTwoPartsIsReadAsWrittenAndAMetricTheyDisagreeOnIsRefused) {
  std::vector<CaseResult> cases = SomeCases();
  CaseResult count;
  count.benchmark = cases[0].benchmark;
  count.metrics = {{"instructions", "instr/iter", Direction::kLowerIsBetter}};
  count.status = cases[0].status;
  count.samples = {{1000, {17711}, false}};
  cases.push_back(count);
  auto set = ParseResultText(WriteResultJson(SomeMeta(), cases), "parts.json");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->cases.size(), cases.size());
  EXPECT_EQ(set->cases.back().metrics, count.metrics);
  EXPECT_EQ(set->cases.back().samples[0].values, std::vector<double>{17711});

  cases.back().metrics = {{cases[0].metrics[0].name, "s", cases[0].metrics[0].direction}};
  set = ParseResultText(WriteResultJson(SomeMeta(), cases), "clash.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("gives metric '" + cases[0].metrics[0].name + "' as s"));
}

TEST(PerfgateResultFile, ABareNaNIsRefusedByNameAsInOtherFormats) {
  std::string text = WriteResultJson(SomeMeta(), SomeCases());
  const std::string from = "\"values\": [";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  const size_t first = at + from.size(), comma = text.find(',', first);
  text.replace(first, comma - first, "NaN");  // the first value of the first sample
  auto set = ParseResultText(text, "nan.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("nan.json: cases[0].samples[0].values[0]: is NaN, not a number"));
}

TEST(PerfgateResultFile, ReadsTheSameWhetherIndentedOrCompact) {
  const std::string indented = WriteResultJson(SomeMeta(), SomeCases());
  auto a = ParseResultText(indented, "a.json");
  auto b = ParseResultText(json::parse(indented).dump(), "b.json");
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(a->context, b->context);
  ASSERT_EQ(a->cases.size(), b->cases.size());
  for (size_t i = 0; i < a->cases.size(); ++i) {
    EXPECT_EQ(a->cases[i].benchmark, b->cases[i].benchmark);
    ASSERT_EQ(a->cases[i].samples.size(), b->cases[i].samples.size());
    for (size_t s = 0; s < a->cases[i].samples.size(); ++s) {
      EXPECT_EQ(a->cases[i].samples[s].values, b->cases[i].samples[s].values);
    }
  }
}

// Iteration rows of a Google Benchmark file, by run_name, in file order.
std::map<std::string, std::vector<json>> IterationRows(const json& doc) {
  std::map<std::string, std::vector<json>> rows;
  for (const json& b : doc["benchmarks"]) {
    if (b["run_type"] == "iteration") rows[b["run_name"].get<std::string>()].push_back(b);
  }
  return rows;
}

TEST(GoogleBenchmarkFile, GivesOneCasePerRunNameWithEachRepetitionAsASample) {
  auto set = ReadResultFile(Fixture("gbench_repetitions.json"));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->format, "google-benchmark");
  EXPECT_EQ(set->sku, "");  // Google Benchmark records no CPU model
  const json doc = FixtureJson("gbench_repetitions.json");
  EXPECT_EQ(set->context["host_name"], doc["context"]["host_name"].get<std::string>());
  const auto rows = IterationRows(doc);
  ASSERT_EQ(set->cases.size(), rows.size());
  // Arguments become a0, a1, ...; named arguments keep their names; the
  // thread count and timer are parameters too.
  const std::map<std::string, std::string> keys = {
      {"BM_Copy/4096", "gbench/BM_Copy{a0=4096}"},
      {"BM_Copy/262144", "gbench/BM_Copy{a0=262144}"},
      {"BM_StridedSum/n:4096/stride:1", "gbench/BM_StridedSum{n=4096,stride=1}"},
      {"BM_StridedSum/n:4096/stride:8", "gbench/BM_StridedSum{n=4096,stride=8}"},
      {"BM_Accumulate/1024/real_time/threads:2", "gbench/BM_Accumulate{a0=1024,threads=2,timer=real_time}"}};
  for (const auto& [run_name, want_rows] : rows) {
    ASSERT_EQ(keys.count(run_name), 1u) << run_name;
    const CaseResult* c = FindCase(*set, keys.at(run_name));
    ASSERT_NE(c, nullptr) << keys.at(run_name);
    EXPECT_EQ(c->status, CaseStatus::kOk);
    // Aggregates (mean, median, stddev, cv) are not samples.
    ASSERT_EQ(c->samples.size(), want_rows.size()) << run_name;
    const int real = MetricIndex(*c, "real_time");
    const int cpu = MetricIndex(*c, "cpu_time");
    ASSERT_GE(real, 0);
    ASSERT_GE(cpu, 0);
    EXPECT_EQ(c->metrics[real].unit, want_rows[0]["time_unit"].get<std::string>());
    EXPECT_EQ(c->metrics[real].direction, Direction::kLowerIsBetter);
    for (size_t s = 0; s < want_rows.size(); ++s) {
      EXPECT_EQ(c->samples[s].index, want_rows[s]["repetition_index"].get<uint32_t>());
      EXPECT_DOUBLE_EQ(c->samples[s].values[real], want_rows[s]["real_time"].get<double>());
      EXPECT_DOUBLE_EQ(c->samples[s].values[cpu], want_rows[s]["cpu_time"].get<double>());
      if (want_rows[s].contains("bytes_per_second")) {
        const int bw = MetricIndex(*c, "bytes_per_second");
        ASSERT_GE(bw, 0);
        EXPECT_EQ(c->metrics[bw].unit, "GB/s");
        EXPECT_DOUBLE_EQ(c->samples[s].values[bw], want_rows[s]["bytes_per_second"].get<double>() / 1e9);
      }
    }
  }
}

TEST(GoogleBenchmarkFile, UserCountersImproveUpwardsUnlessNamedLikeATime) {
  auto set = ReadResultFile(Fixture("gbench_repetitions.json"));
  ASSERT_TRUE(set.ok()) << set.status();
  const CaseResult* c = FindCase(*set, "gbench/BM_StridedSum{n=4096,stride=1}");
  ASSERT_NE(c, nullptr);
  const std::map<std::string, Direction> want = {{"items_per_second", Direction::kHigherIsBetter},
                                                 {"elements", Direction::kHigherIsBetter},
                                                 {"time_per_element", Direction::kLowerIsBetter}};
  for (const auto& [name, direction] : want) {
    const int i = MetricIndex(*c, name);
    ASSERT_GE(i, 0) << name;
    EXPECT_EQ(c->metrics[i].direction, direction) << name;
  }
}

TEST(GoogleBenchmarkFile, WithOnlyAggregatesGivesTheMedianAsOneSampleAndSaysSo) {
  auto set = ReadResultFile(Fixture("gbench_aggregates_only.json"));
  ASSERT_TRUE(set.ok()) << set.status();
  const json doc = FixtureJson("gbench_aggregates_only.json");
  std::map<std::string, json> medians;
  for (const json& b : doc["benchmarks"]) {
    if (b["aggregate_name"] == "median") medians[b["run_name"].get<std::string>()] = b;
  }
  ASSERT_FALSE(medians.empty());
  ASSERT_EQ(set->cases.size(), medians.size());
  for (const CaseResult& c : set->cases) {
    ASSERT_EQ(c.samples.size(), 1u) << c.benchmark.Key();
    EXPECT_EQ(c.status, CaseStatus::kOk);
  }
  const CaseResult* copy = FindCase(*set, "gbench/BM_Copy{a0=4096}");
  ASSERT_NE(copy, nullptr);
  EXPECT_DOUBLE_EQ(copy->samples[0].values[MetricIndex(*copy, "real_time")],
                   medians.at("BM_Copy/4096")["real_time"].get<double>());
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("only aggregates (--benchmark_report_aggregates_only)"));
  EXPECT_THAT(set->notes[0], HasSubstr("from the median"));
}

TEST(GoogleBenchmarkFile, ErrorOccurredFailsThatCaseWithTheMessageAndKeepsTheOthers) {
  auto set = ReadResultFile(Fixture("gbench_error.json"));
  ASSERT_TRUE(set.ok()) << set.status();
  const json doc = FixtureJson("gbench_error.json");
  const auto rows = IterationRows(doc);
  const CaseResult* failed = FindCase(*set, "gbench/BM_NeedsDevice");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->status, CaseStatus::kFailed);
  EXPECT_EQ(failed->reason, rows.at("BM_NeedsDevice")[0]["error_message"].get<std::string>());
  EXPECT_TRUE(failed->samples.empty());
  EXPECT_FALSE(failed->metrics.empty());  // a failed case still names what it would have measured
  const CaseResult* ok = FindCase(*set, "gbench/BM_Copy{a0=4096}");
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(ok->status, CaseStatus::kOk);
  EXPECT_EQ(ok->samples.size(), rows.at("BM_Copy/4096").size());
}

TEST(GoogleBenchmarkFile, WithASingleRepetitionGivesOneSample) {
  json doc = FixtureJson("gbench_repetitions.json");
  json one = json::array();
  for (const json& b : doc["benchmarks"]) {
    if (b["run_type"] == "iteration" && b["repetition_index"] == 0) one.push_back(b);
  }
  const double first_real = one[0]["real_time"].get<double>();
  doc["benchmarks"] = one;
  auto set = ParseResultText(doc.dump(), "single.json");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->cases.size(), one.size());
  for (const CaseResult& c : set->cases) EXPECT_EQ(c.samples.size(), 1u) << c.benchmark.Key();
  EXPECT_DOUBLE_EQ(set->cases[0].samples[0].values[0], first_real);
  EXPECT_EQ(set->cases[0].noise, 0.0);
}

TEST(GoogleBenchmarkFile, MissingRealTimeIsRefusedNamingTheField) {
  json doc = FixtureJson("gbench_repetitions.json");
  doc["benchmarks"][3].erase("real_time");
  auto set = ParseResultText(doc.dump(), "gbench.json");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr("gbench.json: benchmarks[3].real_time: missing"));
}

TEST(GoogleBenchmarkFile, NaNTimeAsGoogleBenchmarkWritesItIsRefusedNamingTheField) {
  // Google Benchmark prints a non-finite double as a bare NaN.
  const std::string text = std::regex_replace(Slurp(Fixture("gbench_repetitions.json")),
                                              std::regex("\"real_time\": [-+.e0-9]+"), "\"real_time\": NaN",
                                              std::regex_constants::format_first_only);
  auto set = ParseResultText(text, "gbench.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("gbench.json: benchmarks[0].real_time: is NaN, not a number"));
}

TEST(GoogleBenchmarkFile, NegativeTimeIsRefusedNamingTheField) {
  json doc = FixtureJson("gbench_repetitions.json");
  doc["benchmarks"][2]["real_time"] = -5.0;
  auto set = ParseResultText(doc.dump(), "gbench.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("gbench.json: benchmarks[2].real_time: -5 is not a positive time"));
}

TEST(GoogleBenchmarkFile, TextTimeIsRefusedAsNotANumber) {
  json doc = FixtureJson("gbench_repetitions.json");
  doc["benchmarks"][1]["cpu_time"] = "fast";
  auto set = ParseResultText(doc.dump(), "gbench.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("gbench.json: benchmarks[1].cpu_time: not a number"));
}

TEST(GoogleBenchmarkFile, TextFieldsAreNotCountersButAnInfiniteCounterIsRefused) {
  json doc = FixtureJson("gbench_repetitions.json");
  for (json& b : doc["benchmarks"]) b["label"] = "warm cache";
  for (json& b : doc["benchmarks"]) b["scheduler"] = "cfs";
  auto set = ParseResultText(doc.dump(), "gbench.json");
  ASSERT_TRUE(set.ok()) << set.status();
  for (const CaseResult& c : set->cases) {
    EXPECT_EQ(MetricIndex(c, "label"), -1);
    EXPECT_EQ(MetricIndex(c, "scheduler"), -1);
  }
  // Google Benchmark prints an infinite counter as a bare Infinity.
  const std::string text = std::regex_replace(Slurp(Fixture("gbench_repetitions.json")),
                                              std::regex("\"items_per_second\": [-+.e0-9]+"),
                                              "\"items_per_second\": Infinity", std::regex_constants::format_first_only);
  auto refused = ParseResultText(text, "gbench.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr(".items_per_second: is Infinity, not a number"));
}

TEST(ResultFile, TruncatedJsonIsRefusedSayingItEndsEarly) {
  const std::string text = Slurp(Fixture("gbench_repetitions.json"));
  auto set = ParseResultText(text.substr(0, text.size() / 2), "cut.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("cut.json: not valid JSON (the file ends early: truncated?)"));
}

TEST(ResultFile, UnknownFormatIsRefusedNamingEveryFormatItReadsAndHowEachIsMade) {
  for (const std::string text : {R"({"results": [1, 2, 3]})", "hello\nworld\n"}) {
    auto set = ParseResultText(text, "other.json");
    ASSERT_FALSE(set.ok());
    EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(set.status().message(), HasSubstr("other.json: unknown format"));
    for (const char* how : {"perfgate-agent run --output", "--benchmark_format=json", "nvbench JSON (--json",
                            "pytest --benchmark-json", "hyperfine --export-json", "all_reduce_perf",
                            "Bencher Metric Format"}) {
      EXPECT_THAT(set.status().message(), HasSubstr(how));
    }
  }
}

TEST(ResultFile, MissingFileIsNotFoundNamingThePath) {
  auto set = ReadResultFile("/nonexistent/results.json");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(set.status().message(), HasSubstr("/nonexistent/results.json"));
}

// The sample times nvbench wrote beside a JSON file: little-endian float32 seconds.
std::vector<double> BinTimes(const std::string& path) {
  const std::string bytes = Slurp(path);
  std::vector<double> out;
  for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
    float f;
    std::memcpy(&f, bytes.data() + i, 4);  // the test machine is little-endian, as the file is
    out.push_back(f);
  }
  return out;
}

// summary tag -> its "value", from a state of an nvbench file.
std::map<std::string, double> SummaryValues(const json& state) {
  std::map<std::string, double> out;
  for (const json& s : state["summaries"]) {
    if (!s.contains("data")) continue;
    for (const json& d : s["data"]) {
      if (d["name"] == "value") out[s["tag"].get<std::string>()] = std::stod(d["value"].get<std::string>());
    }
  }
  return out;
}

std::string StateKey(const std::string& bench, const json& state) {
  BenchmarkId id{"nvbench", bench, {}};
  for (const json& a : state["axis_values"]) id.params[a["name"].get<std::string>()] = a["value"].get<std::string>();
  return id.Key();
}

TEST(NvbenchFile, ReadsEverySampleTimeFromTheBinaryFilesBesideIt) {
  auto set = ReadResultFile(Fixture("nvbench_samples.json"));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->format, "nvbench");
  const json doc = FixtureJson("nvbench_samples.json");
  const json& device = doc["devices"][0];
  EXPECT_EQ(set->sku, GpuSkuKey(device["name"].get<std::string>(), device["global_memory_size"].get<uint64_t>()));
  EXPECT_EQ(set->context["gpu_name"], device["name"].get<std::string>());
  const json& states = doc["benchmarks"][0]["states"];
  ASSERT_EQ(set->cases.size(), states.size());
  for (size_t i = 0; i < states.size(); ++i) {
    const std::string key = StateKey(doc["benchmarks"][0]["name"].get<std::string>(), states[i]);
    const CaseResult* c = FindCase(*set, key);
    ASSERT_NE(c, nullptr) << key;
    const std::vector<double> times = BinTimes(Fixture("nvbench_samples.json-bin/" + std::to_string(i) + ".bin"));
    ASSERT_FALSE(times.empty());
    ASSERT_EQ(c->samples.size(), times.size()) << key;
    EXPECT_EQ(c->reason, "");
    const auto summary = SummaryValues(states[i]);
    const double bytes = summary.at("nv/cold/bw/global/bytes_per_second") * summary.at("nv/cold/time/gpu/mean");
    const int t = MetricIndex(*c, "gpu_time");
    const int bw = MetricIndex(*c, "global_bandwidth");
    ASSERT_GE(t, 0);
    ASSERT_GE(bw, 0);
    EXPECT_EQ(c->metrics[t].unit, "ms");
    EXPECT_EQ(c->metrics[bw].direction, Direction::kHigherIsBetter);
    for (size_t s = 0; s < times.size(); ++s) {
      EXPECT_DOUBLE_EQ(c->samples[s].values[t], times[s] * 1e3);
      EXPECT_NEAR(c->samples[s].values[bw], bytes / times[s] / 1e9, 1e-9 * bytes / times[s]);
    }
  }
}

TEST(NvbenchFile, WithSummariesOnlyGivesTheMeanAsOneSampleAndSaysSo) {
  auto set = ReadResultFile(Fixture("nvbench_summary.json"));
  ASSERT_TRUE(set.ok()) << set.status();
  const json doc = FixtureJson("nvbench_summary.json");
  const json& states = doc["benchmarks"][0]["states"];
  ASSERT_EQ(set->cases.size(), states.size());
  size_t skipped = 0;
  for (const json& state : states) {
    const CaseResult* c = FindCase(*set, StateKey("reduce", state));
    ASSERT_NE(c, nullptr) << StateKey("reduce", state);
    if (state["is_skipped"].get<bool>()) {
      ++skipped;
      EXPECT_EQ(c->status, CaseStatus::kSkipped);
      EXPECT_EQ(c->reason, state["skip_reason"].get<std::string>());
      EXPECT_TRUE(c->samples.empty());
      continue;
    }
    const auto summary = SummaryValues(state);
    EXPECT_EQ(c->status, CaseStatus::kOk);
    EXPECT_EQ(c->reason, "summary only");
    ASSERT_EQ(c->samples.size(), 1u);
    EXPECT_DOUBLE_EQ(c->samples[0].values[MetricIndex(*c, "gpu_time")], summary.at("nv/cold/time/gpu/mean") * 1e3);
    EXPECT_DOUBLE_EQ(c->samples[0].values[MetricIndex(*c, "batch_gpu_time")],
                     summary.at("nv/batch/time/gpu/mean") * 1e3);
    EXPECT_DOUBLE_EQ(c->samples[0].values[MetricIndex(*c, "global_bandwidth")],
                     summary.at("nv/cold/bw/global/bytes_per_second") / 1e9);
  }
  EXPECT_EQ(skipped, 1u);
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr(std::to_string(states.size() - skipped) + " states without per-sample times"));
}

TEST(NvbenchFile, WhoseSampleFilesAreGoneFallsBackToTheSummaryAndNamesTheFile) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string copy = dir.Join("moved.json");
  std::ofstream(copy) << Slurp(Fixture("nvbench_samples.json"));
  auto set = ReadResultFile(copy);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_FALSE(set->cases.empty());
  for (const CaseResult& c : set->cases) {
    EXPECT_EQ(c.samples.size(), 1u);
    EXPECT_THAT(c.reason, HasSubstr("summary only: sample-time file nvbench_samples.json-bin/"));
    EXPECT_THAT(c.reason, HasSubstr("not found"));
  }
}

TEST(NvbenchFile, SampleFileDisagreeingWithTheJsonIsRefused) {
  const perfgate::testing::TempDir dir = Scratch();
  const std::string copy = dir.Join("short.json");
  std::ofstream(copy) << Slurp(Fixture("nvbench_samples.json"));
  std::filesystem::create_directory(copy + "-bin");
  std::filesystem::copy_file(Fixture("nvbench_samples.json-bin/1.bin"), copy + "-bin/1.bin");
  std::string shorter = Slurp(Fixture("nvbench_samples.json-bin/0.bin"));
  shorter.resize(shorter.size() - 4);
  std::ofstream(copy + "-bin/0.bin", std::ios::binary) << shorter;
  auto set = ReadResultFile(copy);
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("benchmarks[0].states[0].summaries["));
  EXPECT_THAT(set.status().message(), HasSubstr("samples where the JSON says"));
}

TEST(NvbenchFile, StateWithoutAColdTimeIsRefusedNamingIt) {
  json doc = FixtureJson("nvbench_summary.json");
  json& summaries = doc["benchmarks"][0]["states"][1]["summaries"];
  json kept = json::array();
  for (const json& s : summaries) {
    if (s["tag"] != "nv/cold/time/gpu/mean") kept.push_back(s);
  }
  summaries = kept;
  auto set = ParseResultText(doc.dump(), "nv.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("nv.json: benchmarks[0].states[1].summaries: no nv/cold/time/gpu/mean"));
}

}  // namespace
}  // namespace perfgate
