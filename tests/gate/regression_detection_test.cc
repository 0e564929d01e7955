// FindRegressions: which change points of a history are stored as
// regressions (beyond the tolerance and the floor, worse for the direction),
// with the commits around the step and the runs near it.
#include "gate/regression_detection.h"

#include <gtest/gtest.h>

#include <string>

namespace perfgate::gate {
namespace {

// 12 runs at `before`, then 12 at `after`, with a small alternating wobble.
HistorySeries Step(double before, double after, Direction direction = Direction::kLowerIsBetter) {
  HistorySeries s;
  s.unit = "s";
  s.direction = direction;
  for (int i = 0; i < 24; ++i) {
    HistoryPoint p;
    p.run_id = "run-" + std::to_string(i);
    p.commit = "c" + std::to_string(i);
    p.median = (i < 12 ? before : after) * (i % 2 ? 1.002 : 0.998);
    p.n = 10;
    s.points.push_back(p);
  }
  return s;
}

TEST(RegressionDetection, StepBeyondToleranceIsOneRegressionWithItsCommits) {
  ResolvedRule rule;
  rule.tolerance = 0.05;
  const auto found = FindRegressions(Step(1.0, 1.2), rule);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].change.index, 12u);
  EXPECT_EQ(found[0].good_commit, "c11");
  EXPECT_EQ(found[0].bad_commit, "c12");
  EXPECT_EQ(found[0].first_bad_run_id, "run-12");
  EXPECT_NEAR(found[0].change.change, 0.2, 0.01);
  ASSERT_EQ(found[0].nearby_runs.size(), 2 * kSameChangeRuns + 1);
  EXPECT_EQ(found[0].nearby_runs.front(), "run-9");
  EXPECT_EQ(found[0].nearby_runs.back(), "run-15");
}

TEST(RegressionDetection, StepWithinToleranceOrBelowFloorOrBetterIsNone) {
  ResolvedRule wide;
  wide.tolerance = 0.25;
  EXPECT_TRUE(FindRegressions(Step(1.0, 1.2), wide).empty());
  ResolvedRule floored;
  floored.tolerance = 0.05;
  floored.floor = 0.5;  // the step is 0.2 s
  EXPECT_TRUE(FindRegressions(Step(1.0, 1.2), floored).empty());
  ResolvedRule rule;
  rule.tolerance = 0.05;
  EXPECT_TRUE(FindRegressions(Step(1.0, 1.2, Direction::kHigherIsBetter), rule).empty());
}

}  // namespace
}  // namespace perfgate::gate
