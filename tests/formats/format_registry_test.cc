// The format table: detection and `--format`. A named format skips the
// detection and its reader reads the file, also one that detection would
// hand to another reader; an unknown name is refused with the names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>
#include <string>

#include "formats/result_file.h"
#include "tests/formats/format_test_support.h"

namespace perfgate {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

// Bencher Metric Format whose benchmarks are named "benchmarks" and
// "context": the shape detection takes for Google Benchmark's.
const json kBencherLikeGbench = {
    {"benchmarks", {{"latency", {{"value", 12.5}}}}},
    {"context", {{"latency", {{"value", 3.0}}}}},
};

TEST(FormatRegistry, NamesEveryFormatOnceInDetectionOrder) {
  const std::vector<std::string> names = ResultFormatNames();
  EXPECT_EQ(names, (std::vector<std::string>{"perfgate", "pytest-benchmark", "nvbench", "google-benchmark",
                                             "hyperfine", "bencher-bmf", "nccl-tests"}));
}

TEST(FormatRegistry, UnknownFileIsRefusedNamingEachFormatByItsName) {
  auto set = ParseResultText("hello\nworld\n", "other.txt");
  ASSERT_FALSE(set.ok());
  for (const std::string& name : ResultFormatNames()) {
    EXPECT_THAT(set.status().message(), HasSubstr(name + ": ")) << name;
  }
}

TEST(FormatRegistry, DetectionMisreadsABencherFileShapedLikeGoogleBenchmarks) {
  auto set = ParseResultText(kBencherLikeGbench.dump(), "bmf.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("bmf.json: benchmarks"));
}

TEST(FormatRegistry, NamedFormatSkipsDetectionAndUsesItsReader) {
  auto set = ParseResultText(kBencherLikeGbench.dump(), "bmf.json", "bencher-bmf");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->format, "bencher-bmf");
  ASSERT_EQ(set->cases.size(), 2u);
  const CaseResult* latency = testing::FindCase(*set, "bencher/benchmarks");
  ASSERT_NE(latency, nullptr);
  ASSERT_EQ(latency->samples.size(), 1u);
  EXPECT_EQ(latency->samples[0].values[0], 12.5);
}

TEST(FormatRegistry, NamedFormatReadsAFileOfAnotherFormatWithItsOwnErrors) {
  const std::string gbench = testing::Slurp(testing::Fixture("gbench_repetitions.json"));
  auto as_hyperfine = ParseResultText(gbench, "gbench.json", "hyperfine");
  ASSERT_FALSE(as_hyperfine.ok());
  EXPECT_EQ(as_hyperfine.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(as_hyperfine.status().message(), HasSubstr("gbench.json: results"));
  auto as_nccl = ParseResultText(gbench, "gbench.json", "nccl-tests");
  ASSERT_FALSE(as_nccl.ok());
  EXPECT_THAT(as_nccl.status().message(), HasSubstr("not nccl-tests output"));
}

TEST(FormatRegistry, NamedFormatOfTheFileReadsWhatDetectionReads) {
  for (const auto& [fixture, format] : {std::pair("gbench_repetitions.json", "google-benchmark"),
                                        std::pair("nvbench_summary.json", "nvbench")}) {
    auto detected = ReadResultFile(testing::Fixture(fixture));
    auto named = ReadResultFile(testing::Fixture(fixture), format);
    ASSERT_TRUE(detected.ok()) << detected.status();
    ASSERT_TRUE(named.ok()) << named.status();
    EXPECT_EQ(named->format, format);
    EXPECT_EQ(named->cases.size(), detected->cases.size());
  }
  CaseResult c;
  c.benchmark = {"kernels", "copy", {}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  c.samples = {{0, {1.5}, false}};
  c.status = CaseStatus::kOk;
  auto perfgate = ParseResultText(WriteResultJson(RunMeta{}, {c}), "run.json", "perfgate");
  ASSERT_TRUE(perfgate.ok()) << perfgate.status();
  EXPECT_EQ(perfgate->format, "perfgate");
}

TEST(FormatRegistry, UnknownNameIsRefusedListingTheNames) {
  EXPECT_TRUE(CheckResultFormat("").ok());
  EXPECT_TRUE(CheckResultFormat("hyperfine").ok());
  const absl::Status s = CheckResultFormat("gbench");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("unknown result format 'gbench'"));
  for (const std::string& name : ResultFormatNames()) EXPECT_THAT(s.message(), HasSubstr(name));
  auto set = ParseResultText("{}", "x.json", "gbench");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("unknown result format 'gbench'"));
}

}  // namespace
}  // namespace perfgate
