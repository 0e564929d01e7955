// hyperfine files: written by a real `hyperfine --export-json` run (Debian's
// hyperfine) of small commands, one with parameters.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "formats/result_file.h"
#include "tests/formats/format_test_support.h"

namespace perfgate {
namespace {

using ::testing::HasSubstr;
using nlohmann::json;

TEST(HyperfineFile, OfARealRunHasOneCasePerCommandAndOneSamplePerRun) {
  const auto dir = testing::Scratch();
  const std::string file = testing::RunHyperfine(dir);
  auto set = ReadResultFile(file);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->format, "hyperfine");
  const json doc = json::parse(testing::Slurp(file));
  ASSERT_EQ(set->cases.size(), doc["results"].size());
  for (const json& r : doc["results"]) {
    const std::string n = r["parameters"]["n"];
    const std::string key = r["command"] == "true" ? "hyperfine/true{n=" + n + "}" : "hyperfine/seq_" + n + "{n=" + n + "}";
    const CaseResult* c = testing::FindCase(*set, key);
    ASSERT_NE(c, nullptr) << key;
    EXPECT_EQ(c->status, CaseStatus::kOk);
    const int t = testing::MetricIndex(*c, "time");
    ASSERT_EQ(t, 0);
    EXPECT_EQ(c->metrics[t].unit, "s");
    EXPECT_EQ(c->metrics[t].direction, Direction::kLowerIsBetter);
    ASSERT_EQ(c->samples.size(), r["times"].size());
    EXPECT_EQ(c->samples.size(), 5u);
    double own = 0;
    for (size_t i = 0; i < c->samples.size(); ++i) {
      EXPECT_EQ(c->samples[i].values[t], r["times"][i].get<double>());
      own += r["times"][i].get<double>();
    }
    EXPECT_NEAR(c->sample_seconds, own, 1e-12);  // the runs' own time, which sizes A/B blocks
  }
}

TEST(HyperfineFile, PerRunUserAndSystemTimesAreMetricsAndAFailedRunFailsTheCase) {
  const auto dir = testing::Scratch();
  json doc = json::parse(testing::Slurp(testing::RunHyperfine(dir)));
  json& first = doc["results"][0];
  const size_t runs = first["times"].size();
  first["user"] = json::array();
  first["system"] = json::array();
  for (size_t i = 0; i < runs; ++i) {
    first["user"].push_back(0.001 * static_cast<double>(i + 1));
    first["system"].push_back(0.0005);
  }
  doc["results"][1]["exit_codes"][2] = 3;
  auto set = ParseResultText(doc.dump(), "hf.json");
  ASSERT_TRUE(set.ok()) << set.status();
  const CaseResult& c = set->cases[0];
  const int user = testing::MetricIndex(c, "user_time");
  ASSERT_GE(user, 0);
  ASSERT_GE(testing::MetricIndex(c, "system_time"), 0);
  for (size_t i = 0; i < runs; ++i) EXPECT_EQ(c.samples[i].values[user], first["user"][i].get<double>());
  EXPECT_EQ(set->cases[1].status, CaseStatus::kFailed);
  EXPECT_THAT(set->cases[1].reason, HasSubstr("run 2 exited with 3"));
  first["user"].erase(0);
  auto refused = ParseResultText(doc.dump(), "hf.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("hf.json: results[0].user: 4 values where times holds 5"));
}

TEST(HyperfineFile, ATextTimeIsRefusedNamingTheField) {
  const auto dir = testing::Scratch();
  json doc = json::parse(testing::Slurp(testing::RunHyperfine(dir)));
  doc["results"][0]["times"][1] = "fast";
  auto set = ParseResultText(doc.dump(), "hf.json");
  ASSERT_FALSE(set.ok());
  EXPECT_THAT(set.status().message(), HasSubstr("hf.json: results[0].times[1]: not a number"));
}

}  // namespace
}  // namespace perfgate
