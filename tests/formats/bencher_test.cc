// Bencher Metric Format: files built from BMF's documented fields are read;
// perfgate's own write of any result set reads back to the same cases, with
// each metric's median as value and min and max as bounds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

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

}  // namespace
}  // namespace perfgate
