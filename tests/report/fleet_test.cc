#include "report/fleet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

namespace perfgate::report {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

gate::FleetReport SlowNodeFleet() {
  gate::FleetReport r;
  r.nodes = 8;
  r.k = 5;
  gate::FleetOutlier o;
  o.node = "gpu-5";
  o.run_id = "run-5";
  o.benchmark = "kernels/copy{bytes=268435456}";
  o.metric = "time";
  o.unit = "ms";
  o.direction = Direction::kLowerIsBetter;
  o.node_median = 12.0;
  o.fleet_median = 10.0;
  o.mad = 0.02;
  o.deviation = 100.0;
  o.side = gate::FleetSide::kWorse;
  o.nodes = 8;
  o.differing_fields.push_back({"pcie_gen_max", "4", "5"});
  r.outliers.push_back(o);
  r.node_summary.push_back({"gpu-5", "run-5", 1, 0});
  r.node_summary.push_back({"gpu-0", "run-0", 0, 0});
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
  gate::FleetReport r;
  r.nodes = 4;
  r.k = 5;
  const std::string text = RenderFleet(r, "h100-sxm5-80gb", "4242");
  EXPECT_THAT(text, HasSubstr("no outliers"));
  EXPECT_THAT(text, Not(HasSubstr("fewer than 3")));
  EXPECT_EQ(FleetExitCode(r), 0);
}

TEST(RenderFleet, SaysSoWhenTooFewNodesWereCompared) {
  gate::FleetReport r;
  r.nodes = 2;
  r.k = 5;
  EXPECT_THAT(RenderFleet(r, "h100-sxm5-80gb", "4242"), HasSubstr("fewer than 3 nodes"));
}

TEST(FleetExitCode, IsOneOnlyWhenSomeNodeIsWorse) {
  gate::FleetReport r = SlowNodeFleet();
  EXPECT_EQ(FleetExitCode(r), 1);
  r.outliers[0].side = gate::FleetSide::kBetter;
  r.outliers[0].deviation = -100.0;
  EXPECT_EQ(FleetExitCode(r), 0);
}

}  // namespace
}  // namespace perfgate::report
