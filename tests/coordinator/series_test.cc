// A long series drawn in a bounded number of points (coordinator/series.h,
// the HTTP API's `points`, as api_messages.h answers it): groups of
// consecutive runs, each change point the first run of its group, nothing
// counted twice or lost.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "coordinator/api/api_messages.h"
#include "coordinator/domain/series.h"

namespace perfgate::coordinator {
namespace {

TEST(GroupPoints, EveryBreakStartsAGroupAndTheGroupsCoverTheSeriesOnce) {
  const std::vector<PointGroup> groups = GroupPoints(10000, {3217, 7661}, 1000);
  ASSERT_FALSE(groups.empty());
  EXPECT_LE(groups.size(), 1000u + 2u);
  EXPECT_GE(groups.size(), 990u);
  EXPECT_EQ(groups.front().first, 0u);
  EXPECT_EQ(groups.back().end, 10000u);
  bool starts_3217 = false, starts_7661 = false;
  for (size_t i = 0; i < groups.size(); ++i) {
    EXPECT_LT(groups[i].first, groups[i].end);
    EXPECT_LE(groups[i].end - groups[i].first, 11u);
    if (i > 0) {
      EXPECT_EQ(groups[i].first, groups[i - 1].end);
    }
    // No group reaches across a break.
    EXPECT_FALSE(groups[i].first < 3217 && groups[i].end > 3217) << i;
    starts_3217 |= groups[i].first == 3217;
    starts_7661 |= groups[i].first == 7661;
  }
  EXPECT_TRUE(starts_3217);
  EXPECT_TRUE(starts_7661);
}

TEST(GroupPoints, ASeriesWithinTheLimitKeepsAPointARun) {
  for (size_t max_points : {0u, 500u, 1000u}) {
    const std::vector<PointGroup> groups = GroupPoints(500, {100}, max_points);
    ASSERT_EQ(groups.size(), 500u) << max_points;
    EXPECT_EQ(groups[123].first, 123u);
    EXPECT_EQ(groups[123].end, 124u);
  }
}

// `runs` runs of one metric, level 100 ms then 104 ms from run `shift`,
// each run's band ±2 ms; run 20 is invalid for gating and far off.
Series LongSeries(size_t runs, size_t shift) {
  Series s;
  s.unit = "ms";
  for (size_t i = 0; i < runs; ++i) {
    SeriesPoint p;
    p.point.run_id = "run-" + std::to_string(i);
    p.point.commit = "c" + std::to_string(i);
    p.point.finished_at = TimePoint{} + std::chrono::seconds(1000 + i);
    p.point.median = (i < shift ? 100.0 : 104.0) + 0.01 * static_cast<double>(i % 7);
    p.point.n = 10;
    p.p5 = p.point.median - 2;
    p.p95 = p.point.median + 2;
    p.n_throttled = i % 100 == 0 ? 1 : 0;
    if (i == 20) {
      p.point.median = 500;
      p.invalid_reasons = {"clocks throttled"};
    }
    s.points.push_back(p);
  }
  return s;
}

TEST(SeriesMessage, ALongSeriesIsDrawnInGroupsThatKeepItsChangeAndItsSums) {
  const Series series = LongSeries(10000, 6001);
  const v1::SeriesResponse m = SeriesMessage(series, {}, 1000);
  EXPECT_EQ(m.runs(), 10000u);
  const auto& points = m.points();
  ASSERT_LE(points.size(), 1001);
  ASSERT_GE(points.size(), 990);
  size_t runs = 0, samples = 0, throttled = 0;
  for (const v1::SeriesPoint& p : points) {
    runs += p.runs();
    samples += p.n();
    throttled += p.n_throttled();
  }
  EXPECT_EQ(runs, 10000u);
  EXPECT_EQ(samples, 100000u);
  EXPECT_EQ(throttled, 100u);
  // The group holding the invalid run stays valid, its median that of its
  // valid runs; its band the widest of theirs.
  int with_20 = 0;
  for (size_t seen = points[0].runs(); seen <= 20; seen += points[with_20].runs()) ++with_20;
  const v1::SeriesPoint& group = points[with_20];
  EXPECT_GT(group.runs(), 1u);
  EXPECT_TRUE(group.invalid_reasons().empty());
  EXPECT_LT(group.median(), 101.0);
  EXPECT_NEAR(group.p5(), 98.0, 1e-9);
  // The change is found at its run, and that run begins a point.
  ASSERT_EQ(m.changes_size(), 1);
  const v1::SeriesChange& change = m.changes(0);
  EXPECT_EQ(change.commit(), "c6001");
  const v1::SeriesPoint& at = points[static_cast<int>(change.index())];
  EXPECT_EQ(at.first_commit(), "c6001");
  EXPECT_GT(at.median(), 103.9);
  EXPECT_LT(points[static_cast<int>(change.index()) - 1].median(), 100.1);
}

TEST(SeriesMessage, WithoutALimitEveryRunIsItsOwnPoint) {
  const Series series = LongSeries(300, 150);
  const v1::SeriesResponse m = SeriesMessage(series, {});
  ASSERT_EQ(m.points_size(), 300);
  EXPECT_EQ(m.points(20).median(), 500.0);
  EXPECT_EQ(m.points(20).invalid_reasons(0), "clocks throttled");
  EXPECT_EQ(m.points(20).runs(), 1u);
  EXPECT_EQ(m.points(20).t().seconds(), 1020);
  ASSERT_EQ(m.changes_size(), 1);
  EXPECT_EQ(m.changes(0).index(), 150u);
}

TEST(SeriesMessage, AValueNotMeasuredIsAbsentNotNaN) {
  Series series = LongSeries(30, 15);
  series.points[3].p5 = std::nan("");  // a run closed before p5 was stored
  series.points[3].p95 = std::nan("");
  const v1::SeriesResponse m = SeriesMessage(series, {});
  EXPECT_FALSE(m.points(3).has_p5());
  EXPECT_FALSE(m.points(3).has_p95());
  EXPECT_TRUE(m.points(3).has_median());
  EXPECT_TRUE(m.points(4).has_p5());
}

}  // namespace
}  // namespace perfgate::coordinator
