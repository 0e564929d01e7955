#include "report/history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace perfgate::report {
namespace {

using ::testing::HasSubstr;

HistoryReport ShiftedHistory() {
  HistoryReport h;
  h.series.unit = "ms";
  h.series.direction = Direction::kLowerIsBetter;
  for (int i = 0; i < 8; ++i) {
    HistoryPoint p;
    p.run_id = "run-" + std::to_string(i);
    p.commit = "c0mmit" + std::to_string(i) + "abcdef0123456789";
    p.branch = "main";
    p.node = "node-1";
    p.finished_at = TimePoint(std::chrono::seconds(1'790'000'000 + 86'400 * i));  // 2026-09-21 onwards
    p.median = i < 4 ? 10.1 : 12.3;
    p.n = 20;
    h.series.points.push_back(p);
  }
  HistoryChange c;
  c.index = 4;  // the change names that point's commit and run
  c.median_before = 10.1;
  c.median_after = 12.3;
  c.change = 12.3 / 10.1 - 1;
  c.statistic = 3.5;
  c.p_value = 0.005;
  h.changes.push_back(c);
  return h;
}

TEST(History, NamesEachChangePointWithItsCommitDateRunLevelsAndDirection) {
  const std::string text = RenderHistory(ShiftedHistory(), "kernels/copy", "time");
  EXPECT_THAT(text, HasSubstr("kernels/copy time [ms]"));
  EXPECT_THAT(text, HasSubstr("change point at c0mmit4abcde (2026-09-25, run run-4): "
                              "median 10.1 → 12.3 ms, +21.8 % worse, p 0.005"));
}

TEST(History, ImprovementOfAHigherIsBetterMetricReadsBetter) {
  HistoryReport h = ShiftedHistory();
  h.series.direction = Direction::kHigherIsBetter;
  h.series.unit = "GB/s";
  h.changes[0].change = -(12.3 / 10.1 - 1);
  EXPECT_THAT(RenderHistory(h, "kernels/copy", "bandwidth"), HasSubstr("-21.8 % better"));
}

TEST(History, WithoutChangePointsPrintsOnlyTheSeries) {
  HistoryReport h = ShiftedHistory();
  h.changes.clear();
  const std::string text = RenderHistory(h, "kernels/copy", "time");
  EXPECT_THAT(text, ::testing::Not(HasSubstr("change point")));
  EXPECT_THAT(text, HasSubstr("c0mmit7abcde"));
}

}  // namespace
}  // namespace perfgate::report
