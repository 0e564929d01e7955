// pytest-benchmark files: written by a real `python3 -m pytest
// --benchmark-json` run of a tiny test file the test writes, and the same
// file without its per-round data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "common/identity.h"
#include "formats/result_file.h"
#include "tests/formats/format_test_support.h"

namespace perfgate {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

TEST(PytestBenchmarkFile, OfARealRunHasOneSamplePerRoundAndTheParametersAsParameters) {
  const auto dir = testing::Scratch();
  const std::string file = testing::RunPytest(dir, PERFGATE_SYSTEM_PYTHON);
  auto set = ReadResultFile(file);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->format, "pytest-benchmark");
  const json doc = json::parse(testing::Slurp(file));
  ASSERT_EQ(set->cases.size(), doc["benchmarks"].size());
  for (const json& b : doc["benchmarks"]) {
    const std::string name = b["name"];
    BenchmarkId id{"pytest", "test_tiny.py__" + name.substr(0, name.find('[')), {}};
    if (b["params"].is_object()) {
      for (const auto& [k, v] : b["params"].items()) id.params[k] = v.dump();
    }
    const CaseResult* c = testing::FindCase(*set, id.Key());
    ASSERT_NE(c, nullptr) << id.Key();
    ASSERT_EQ(c->metrics.size(), 1u);
    EXPECT_EQ(c->metrics[0].name, "time");
    EXPECT_EQ(c->metrics[0].unit, "s");
    EXPECT_EQ(c->metrics[0].direction, Direction::kLowerIsBetter);
    ASSERT_EQ(c->samples.size(), b["stats"]["rounds"].get<size_t>());
    EXPECT_GE(c->samples.size(), 5u);
    EXPECT_EQ(c->samples[0].values[0], b["stats"]["data"][0].get<double>());
    double own = 0;
    for (const json& d : b["stats"]["data"]) own += d.get<double>() * b["stats"]["iterations"].get<double>();
    EXPECT_NEAR(c->sample_seconds, own, 1e-12);  // the rounds' own time, which sizes A/B blocks
  }
  EXPECT_NE(testing::FindCase(*set, "pytest/test_tiny.py__test_sum{n=1000}"), nullptr);
  EXPECT_TRUE(set->notes.empty());
  EXPECT_EQ(set->context["host_name"], doc["machine_info"]["node"].get<std::string>());
  const json& cpu = doc["machine_info"]["cpu"];
  const std::string brand = cpu.value("brand_raw", cpu.value("brand", ""));
  if (!brand.empty()) {
    EXPECT_EQ(set->sku, CpuSkuKey(cpu.value("vendor_id_raw", cpu.value("vendor_id", "")), brand));
  }
}

TEST(PytestBenchmarkFile, WithoutPerRoundDataGivesTheMedianAsOneSampleAndSaysSo) {
  const auto dir = testing::Scratch();
  json doc = json::parse(testing::Slurp(testing::RunPytest(dir, PERFGATE_SYSTEM_PYTHON)));
  for (json& b : doc["benchmarks"]) b["stats"].erase("data");
  auto set = ParseResultText(doc.dump(), "saved.json");
  ASSERT_TRUE(set.ok()) << set.status();
  for (size_t i = 0; i < set->cases.size(); ++i) {
    ASSERT_EQ(set->cases[i].samples.size(), 1u);
    EXPECT_EQ(set->cases[i].samples[0].values[0], doc["benchmarks"][i]["stats"]["median"].get<double>());
  }
  ASSERT_EQ(set->notes.size(), 1u);
  EXPECT_THAT(set->notes[0], HasSubstr("hold no per-round times"));
}

TEST(PytestBenchmarkFile, ANegativeRoundTimeIsRefusedNamingTheField) {
  const auto dir = testing::Scratch();
  json doc = json::parse(testing::Slurp(testing::RunPytest(dir, PERFGATE_SYSTEM_PYTHON)));
  doc["benchmarks"][1]["stats"]["data"][2] = -1.0;
  auto set = ParseResultText(doc.dump(), "bad.json");
  ASSERT_FALSE(set.ok());
  EXPECT_EQ(set.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(set.status().message(), HasSubstr("bad.json: benchmarks[1].stats.data[2]: -1 is not a time"));
}

}  // namespace
}  // namespace perfgate
