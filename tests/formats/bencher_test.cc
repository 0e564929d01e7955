// Bencher Metric Format: files built from BMF's documented fields are read;
// perfgate's own write of any result set reads back to the same cases, with
// each metric's median as value and min and max as bounds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "formats/result_file.h"
#include "tests/formats/format_test_support.h"

namespace perfgate {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

TEST(BencherFile, GivesOneCasePerBenchmarkAndOneSamplePerMeasureWithKnownDirections) {
  const json doc = {
      {"sort::quick", {{"latency", {{"value", 88.5}, {"lower_value", 80.0}, {"upper_value", 99.0}}},
                       {"throughput", {{"value", 1.2e6}}}}},
      {"bundle", {{"file-size", {{"value", 4096}}}, {"build-time", {{"value", 12.5}}}}},
  };
  auto set = ParseResultText(doc.dump(), "bmf.json");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->format, "bencher-bmf");
  ASSERT_EQ(set->cases.size(), 2u);
  const CaseResult* sort = testing::FindCase(*set, "bencher/sort__quick");
  ASSERT_NE(sort, nullptr);
  ASSERT_EQ(sort->samples.size(), 1u);
  const int latency = testing::MetricIndex(*sort, "latency");
  const int throughput = testing::MetricIndex(*sort, "throughput");
  EXPECT_EQ(sort->samples[0].values[latency], doc["sort::quick"]["latency"]["value"].get<double>());
  EXPECT_EQ(sort->metrics[latency].direction, Direction::kLowerIsBetter);
  EXPECT_EQ(sort->metrics[latency].unit, "ns");
  EXPECT_EQ(sort->metrics[throughput].direction, Direction::kHigherIsBetter);
  const CaseResult* bundle = testing::FindCase(*set, "bencher/bundle");
  ASSERT_NE(bundle, nullptr);
  EXPECT_EQ(bundle->metrics[testing::MetricIndex(*bundle, "file-size")].direction, Direction::kLowerIsBetter);
  EXPECT_EQ(bundle->metrics[testing::MetricIndex(*bundle, "build-time")].direction, Direction::kLowerIsBetter);
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("bounds, not samples"));
}

TEST(BencherFile, WrittenFromAResultSetReadsBackToTheSameCasesWithMedianAndBounds) {
  ResultSet written;
  CaseResult c;
  c.benchmark = {"kernels", "copy", {{"bytes", "4096"}}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}, {"bandwidth", "GB/s", Direction::kHigherIsBetter}};
  c.samples = {{0, {3.0, 10.0}, false}, {1, {1.0, 30.0}, false}, {2, {2.0, 20.0}, false}, {3, {99.0, 1.0}, true}};
  written.cases.push_back(c);
  const std::string text = WriteBencherJson({written});
  const json doc = json::parse(text);
  const json& time = doc["kernels/copy{bytes=4096}"]["time"];
  EXPECT_EQ(time["value"], 2.0);  // the throttled sample is left out
  EXPECT_EQ(time["lower_value"], 1.0);
  EXPECT_EQ(time["upper_value"], 3.0);
  auto set = ParseResultText(text, "out.json");
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->cases.size(), 1u);
  EXPECT_EQ(set->cases[0].benchmark, c.benchmark);
  EXPECT_EQ(set->cases[0].samples[0].values[testing::MetricIndex(set->cases[0], "bandwidth")], 20.0);
}

TEST(BencherFile, AMeasureWithoutAValueIsRefusedNamingIt) {
  const json doc = {{"sort", {{"latency", {{"value", 1.0}}}, {"throughput", {{"lower_value", 2.0}}}}}};
  auto set = ParseResultText(doc.dump(), "bmf.json");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr("bmf.json: sort.throughput.value: missing"));
}

// The status of reading a file of one benchmark with one measure.
absl::Status ReadMeasure(const std::string& measure, const json& fields) {
  return ParseResultText(json{{"sort", {{measure, fields}}}}.dump(), "bmf.json").status();
}

TEST(BencherFile, BoundsThatDoNotEncloseTheValueAreRefusedNamingTheBound) {
  // Each alone: a lower bound above the value, an upper bound below it.
  absl::Status s = ReadMeasure("latency", {{"value", 5.0}, {"lower_value", 1e308}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("bmf.json: sort.latency.lower_value: 1e+308 is above the value 5"));
  s = ReadMeasure("score", {{"value", -5.0}, {"upper_value", -10.0}});
  EXPECT_THAT(s.message(), HasSubstr("sort.score.upper_value: -10 is below the value -5"));
  // Equal bounds and a measure of the user's own below zero are fine.
  EXPECT_TRUE(ReadMeasure("score", {{"value", -3.0}, {"lower_value", -4.0}, {"upper_value", -3.0}}).ok());
  EXPECT_TRUE(ReadMeasure("latency", {{"value", 2.0}, {"lower_value", 2.0}, {"upper_value", 2.0}}).ok());
}

TEST(BencherFile, TheProbesFileOfANegativeValueBetweenInvertedBoundsIsRefused) {
  const absl::Status s = ReadMeasure("latency", {{"value", -1e308}, {"lower_value", 1e308}, {"upper_value", -1}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("sort.latency.value: -1e+308 is negative: a latency cannot be"));
}

TEST(BencherFile, ANegativeTimeRateOrSizeIsRefusedNamingTheField) {
  for (const char* measure : {"latency", "throughput", "build-time", "file-size"}) {
    absl::Status s = ReadMeasure(measure, {{"value", -2.0}});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << measure;
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("sort.", measure, ".value: -2 is negative"))) << measure;
    s = ReadMeasure(measure, {{"value", 2.0}, {"lower_value", -1.0}});
    EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("sort.", measure, ".lower_value: -1 is negative"))) << measure;
  }
}

TEST(BencherFile, ANonFiniteBoundIsRefusedNamingIt) {
  // nlohmann writes no NaN; a tool that writes the bare word is read
  // through QuoteNonFinite, which marks it so the field is named.
  const std::string text = R"({"sort": {"latency": {"value": 3.0, "upper_value": Infinity}}})";
  auto set = ParseResultText(text, "bmf.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("sort.latency.upper_value"));
}

}  // namespace
}  // namespace perfgate
