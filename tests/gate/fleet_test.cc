#include "gate/fleet.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/stats.h"

namespace perfgate::gate {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr char kFleetCopy[] = "kernels/copy{bytes=268435456}";
constexpr char kFleetTriad[] = "kernels/triad{n=67108864}";

MetricSummary FleetSummary(const std::string& benchmark, const std::string& metric, double median,
                      Direction direction = Direction::kLowerIsBetter) {
  MetricSummary s;
  s.benchmark = benchmark;
  s.metric = metric;
  s.unit = direction == Direction::kLowerIsBetter ? "ms" : "GB/s";
  s.direction = direction;
  s.n = 20;
  s.median = median;
  s.status = CaseStatus::kOk;
  return s;
}

FleetRun Node(int i, std::vector<MetricSummary> summaries,
              std::map<std::string, std::string> fields = {{"pcie_gen_max", "5"}, {"driver", "570.86"}}) {
  FleetRun r;
  r.node = "gpu-" + std::to_string(i);
  r.run_id = "run-" + std::to_string(i);
  r.finished_at = TimePoint{} + std::chrono::hours(1);
  r.fields = std::move(fields);
  r.summaries = std::move(summaries);
  return r;
}

// Eight nodes whose copy times spread by a few tenths of a percent around 10 ms.
std::vector<FleetRun> HealthyFleet(Direction direction = Direction::kLowerIsBetter) {
  const double spread[] = {-0.3, -0.2, -0.1, 0.0, 0.0, 0.1, 0.2, 0.3};
  std::vector<FleetRun> fleet;
  for (int i = 0; i < 8; ++i) {
    fleet.push_back(Node(i, {FleetSummary(kFleetCopy, "time", 10.0 * (1 + spread[i] / 100), direction)}));
  }
  return fleet;
}

TEST(FleetOutliers, NamesTheSlowNodeWithTheFieldItDiffersIn) {
  std::vector<FleetRun> fleet = HealthyFleet();
  fleet[5].summaries[0].median *= 1.2;
  fleet[5].fields["pcie_gen_max"] = "4";

  const FleetReport report = FindFleetOutliers(fleet);

  EXPECT_EQ(report.nodes, 8u);
  ASSERT_EQ(report.outliers.size(), 1u);
  const FleetOutlier& o = report.outliers[0];
  EXPECT_EQ(o.node, "gpu-5");
  EXPECT_EQ(o.run_id, "run-5");
  EXPECT_EQ(o.side, FleetSide::kWorse);
  EXPECT_GT(o.deviation, 5.0);
  EXPECT_EQ(o.nodes, 8u);
  std::vector<double> medians;
  for (const FleetRun& r : fleet) medians.push_back(r.summaries[0].median);
  EXPECT_DOUBLE_EQ(o.fleet_median, stats::Median(medians));
  EXPECT_DOUBLE_EQ(o.mad, stats::Mad(medians));
  EXPECT_DOUBLE_EQ(o.deviation, (o.node_median - o.fleet_median) / o.mad);
  EXPECT_THAT(o.differing_fields, ElementsAre(FieldDifference{"pcie_gen_max", "4", "5"}));
  EXPECT_TRUE(report.AnyWorse());
  ASSERT_EQ(report.node_summary.size(), 8u);
  EXPECT_EQ(report.node_summary[0].node, "gpu-5");
  EXPECT_EQ(report.node_summary[0].worse, 1u);
  EXPECT_EQ(report.node_summary[1].worse, 0u);
}

TEST(FleetOutliers, NamesNoNodeInAHealthyFleet) {
  const FleetReport report = FindFleetOutliers(HealthyFleet());
  EXPECT_THAT(report.outliers, IsEmpty());
  EXPECT_FALSE(report.AnyWorse());
}

TEST(FleetOutliers, CallsALowBandwidthWorseWhenHigherIsBetter) {
  std::vector<FleetRun> fleet = HealthyFleet(Direction::kHigherIsBetter);
  fleet[2].summaries[0].median *= 0.8;  // slow
  fleet[6].summaries[0].median *= 1.2;  // fast

  const FleetReport report = FindFleetOutliers(fleet);

  ASSERT_EQ(report.outliers.size(), 2u);
  EXPECT_EQ(report.outliers[0].node, "gpu-2");
  EXPECT_EQ(report.outliers[0].side, FleetSide::kWorse);
  EXPECT_GT(report.outliers[0].deviation, 5.0);
  EXPECT_EQ(report.outliers[1].node, "gpu-6");
  EXPECT_EQ(report.outliers[1].side, FleetSide::kBetter);
  EXPECT_LT(report.outliers[1].deviation, -5.0);
  EXPECT_STREQ(ToString(report.outliers[1].side), "better");
}

TEST(FleetOutliers, ComparesNothingWithFewerThanThreeNodes) {
  std::vector<FleetRun> fleet = HealthyFleet();
  fleet.resize(2);
  fleet[1].summaries[0].median *= 2;
  const FleetReport report = FindFleetOutliers(fleet);
  EXPECT_EQ(report.nodes, 2u);
  EXPECT_THAT(report.outliers, IsEmpty());
}

TEST(FleetOutliers, SkipsAMetricFewerThanThreeNodesMeasured) {
  std::vector<FleetRun> fleet = HealthyFleet();
  fleet[0].summaries.push_back(FleetSummary(kFleetTriad, "time", 1.0));
  fleet[1].summaries.push_back(FleetSummary(kFleetTriad, "time", 9.0));
  EXPECT_THAT(FindFleetOutliers(fleet).outliers, IsEmpty());
}

TEST(FleetOutliers, FloorsAZeroMadAtATenthOfAPercentOfTheMedian) {
  std::vector<FleetRun> fleet;
  for (int i = 0; i < 6; ++i) fleet.push_back(Node(i, {FleetSummary(kFleetCopy, "time", 100.0)}));
  fleet[1].summaries[0].median = 100.2;  // 0.2 % off: 2 floored MADs
  fleet[4].summaries[0].median = 110.0;  // 10 % off: 100 floored MADs

  const FleetReport report = FindFleetOutliers(fleet);

  ASSERT_EQ(report.outliers.size(), 1u);
  EXPECT_EQ(report.outliers[0].node, "gpu-4");
  EXPECT_DOUBLE_EQ(report.outliers[0].mad, kFleetMadFloor * 100.0);
  EXPECT_NEAR(report.outliers[0].deviation, 10.0 / (kFleetMadFloor * 100.0), 1e-6);
}

TEST(FleetOutliers, NamesNothingWhenEveryNodeMeasuredZero) {
  std::vector<FleetRun> fleet;
  for (int i = 0; i < 4; ++i) fleet.push_back(Node(i, {FleetSummary(kFleetCopy, "errors", 0.0)}));
  EXPECT_THAT(FindFleetOutliers(fleet).outliers, IsEmpty());
}

TEST(FleetOutliers, ListsNoFieldWhoseMostCommonValueIsTied) {
  std::vector<FleetRun> fleet = HealthyFleet();
  fleet[3].summaries[0].median *= 1.5;
  for (int i = 0; i < 8; ++i) fleet[i].fields["image"] = i < 4 ? "a" : "b";  // 4 against 4
  fleet[3].fields["driver"] = "575.51";

  const FleetReport report = FindFleetOutliers(fleet);

  ASSERT_EQ(report.outliers.size(), 1u);
  EXPECT_THAT(report.outliers[0].differing_fields,
              ElementsAre(FieldDifference{"driver", "575.51", "570.86"}));
}

TEST(FleetOutliers, ListsAFieldTheNodeLacks) {
  std::vector<FleetRun> fleet = HealthyFleet();
  fleet[7].summaries[0].median *= 1.5;
  fleet[7].fields.erase("pcie_gen_max");
  const FleetReport report = FindFleetOutliers(fleet);
  ASSERT_EQ(report.outliers.size(), 1u);
  EXPECT_THAT(report.outliers[0].differing_fields, ElementsAre(FieldDifference{"pcie_gen_max", "", "5"}));
}

TEST(FleetOutliers, UsesOnlyTheNewestRunOfANode) {
  std::vector<FleetRun> fleet = HealthyFleet();
  FleetRun older = fleet[4];
  older.run_id = "run-4-first";
  older.finished_at -= std::chrono::minutes(30);
  older.summaries[0].median *= 1.5;  // the first attempt was slow; the rerun is not
  fleet.push_back(older);
  FleetRun newer = fleet[0];
  newer.run_id = "run-0-rerun";
  newer.finished_at += std::chrono::minutes(30);
  newer.summaries[0].median *= 1.5;  // the rerun is slow
  fleet.push_back(newer);

  const FleetReport report = FindFleetOutliers(fleet);

  EXPECT_EQ(report.nodes, 8u);
  ASSERT_EQ(report.outliers.size(), 1u);
  EXPECT_EQ(report.outliers[0].run_id, "run-0-rerun");
}

TEST(FleetOutliers, HonoursTheBenchmarkGlobMetricAndK) {
  std::vector<FleetRun> fleet = HealthyFleet();
  for (FleetRun& r : fleet) r.summaries.push_back(FleetSummary(kFleetTriad, "time", r.summaries[0].median));
  fleet[1].summaries[0].median *= 1.2;
  fleet[1].summaries[1].median *= 1.2;

  EXPECT_EQ(FindFleetOutliers(fleet).outliers.size(), 2u);
  FleetOptions only_triad;
  only_triad.benchmark_glob = "kernels/triad*";
  ASSERT_EQ(FindFleetOutliers(fleet, only_triad).outliers.size(), 1u);
  EXPECT_EQ(FindFleetOutliers(fleet, only_triad).outliers[0].benchmark, kFleetTriad);
  FleetOptions other_metric;
  other_metric.metric = "bandwidth";
  EXPECT_THAT(FindFleetOutliers(fleet, other_metric).outliers, IsEmpty());
  FleetOptions lenient;
  lenient.k = 1e6;
  EXPECT_THAT(FindFleetOutliers(fleet, lenient).outliers, IsEmpty());
}

}  // namespace
}  // namespace perfgate::gate
