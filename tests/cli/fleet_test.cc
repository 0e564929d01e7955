#include "cli/fleet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace perfgate::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::FleetResponse SlowNodeFleet() {
  v1::FleetResponse r;
  r.set_nodes(8);
  r.set_k(5);
  v1::FleetOutlier* o = r.add_outliers();
  o->set_node("gpu-5");
  o->set_run_id("run-5");
  o->set_benchmark("kernels/copy{bytes=268435456}");
  o->set_metric("time");
  o->set_unit("ms");
  o->set_direction(v1::LOWER_IS_BETTER);
  o->set_node_median(12.0);
  o->set_fleet_median(10.0);
  o->set_mad(0.02);
  o->set_deviation(100.0);
  o->set_side("worse");
  o->set_nodes(8);
  v1::FieldDifference* d = o->add_differing_fields();
  d->set_name("pcie_gen_max");
  d->set_node_value("4");
  d->set_majority_value("5");
  v1::FleetNode* n = r.add_node_summary();
  n->set_node("gpu-5");
  n->set_run_id("run-5");
  n->set_worse(1);
  n = r.add_node_summary();
  n->set_node("gpu-0");
  n->set_run_id("run-0");
  return r;
}

TEST(RenderFleet, ShowsTheOutlierWithTheFieldItDiffersInAndCountsPerNode) {
  const std::string text = RenderFleet(SlowNodeFleet(), "h100-sxm5-80gb", "4242");
  EXPECT_THAT(text, HasSubstr("8 nodes of h100-sxm5-80gb in sweep 4242"));
  EXPECT_THAT(text, HasSubstr("gpu-5"));
  EXPECT_THAT(text, HasSubstr("12 ms"));
  EXPECT_THAT(text, HasSubstr("10 ms"));
  EXPECT_THAT(text, HasSubstr("+100.0"));
  EXPECT_THAT(text, HasSubstr("worse"));
  EXPECT_THAT(text, HasSubstr("pcie_gen_max=4 (fleet: 5)"));
  EXPECT_THAT(text, HasSubstr("1 worse, 0 better  (run run-5)"));
  EXPECT_THAT(text, HasSubstr("0 worse, 0 better  (run run-0)"));
  EXPECT_EQ(text.back(), '\n');
}

TEST(RenderFleet, SaysSoWhenNoNodeIsAnOutlier) {
  v1::FleetResponse r;
  r.set_nodes(4);
  r.set_k(5);
  const std::string text = RenderFleet(r, "h100-sxm5-80gb", "4242");
  EXPECT_THAT(text, HasSubstr("no outliers"));
  EXPECT_THAT(text, Not(HasSubstr("fewer than 3")));
  EXPECT_EQ(FleetExitCode(r), 0);
}

TEST(RenderFleet, SaysSoWhenTooFewNodesWereCompared) {
  v1::FleetResponse r;
  r.set_nodes(2);
  r.set_k(5);
  EXPECT_THAT(RenderFleet(r, "h100-sxm5-80gb", "4242"), HasSubstr("fewer than 3 nodes"));
}

TEST(FleetExitCode, IsOneOnlyWhenSomeNodeIsWorse) {
  v1::FleetResponse r = SlowNodeFleet();
  EXPECT_EQ(FleetExitCode(r), 1);
  r.mutable_outliers(0)->set_side("better");
  r.mutable_outliers(0)->set_deviation(-100.0);
  EXPECT_EQ(FleetExitCode(r), 0);
}

TEST(RenderFleetJson, CarriesEveryOutlierFieldAndNullsNonFiniteNumbers) {
  v1::FleetResponse r = SlowNodeFleet();
  r.mutable_outliers(0)->set_mad(std::numeric_limits<double>::quiet_NaN());
  const nlohmann::json j = nlohmann::json::parse(RenderFleetJson(r, "h100-sxm5-80gb", "4242"));
  EXPECT_EQ(j["sweep"], "4242");
  EXPECT_EQ(j["nodes"], 8);
  ASSERT_EQ(j["outliers"].size(), 1u);
  const nlohmann::json& o = j["outliers"][0];
  EXPECT_EQ(o["node"], "gpu-5");
  EXPECT_EQ(o["side"], "worse");
  EXPECT_DOUBLE_EQ(o["deviation"].get<double>(), 100.0);
  EXPECT_TRUE(o["mad"].is_null());
  EXPECT_EQ(o["differing_fields"][0]["name"], "pcie_gen_max");
  EXPECT_EQ(o["differing_fields"][0]["majority_value"], "5");
  EXPECT_EQ(j["node_summary"][0]["worse"], 1);
}

}  // namespace
}  // namespace perfgate::cli
