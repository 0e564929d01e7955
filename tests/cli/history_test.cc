#include "cli/history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace perfgate::cli {
namespace {

using ::testing::HasSubstr;

v1::HistoryResponse ShiftedHistory() {
  v1::HistoryResponse h;
  h.set_unit("ms");
  h.set_direction(v1::LOWER_IS_BETTER);
  for (int i = 0; i < 8; ++i) {
    v1::HistoryPoint* p = h.add_points();
    p->set_run_id("run-" + std::to_string(i));
    p->set_commit("c0mmit" + std::to_string(i) + "abcdef0123456789");
    p->set_branch("main");
    p->set_node("node-1");
    p->mutable_finished_at()->set_seconds(1'790'000'000 + 86'400 * i);  // 2026-09-21 onwards
    p->set_median(i < 4 ? 10.1 : 12.3);
    p->set_n(20);
  }
  v1::ChangePoint* c = h.add_change_points();
  c->set_index(4);
  c->set_commit(h.points(4).commit());
  c->set_run_id(h.points(4).run_id());
  c->set_median_before(10.1);
  c->set_median_after(12.3);
  c->set_change(12.3 / 10.1 - 1);
  c->set_statistic(3.5);
  c->set_p_value(0.005);
  return h;
}

TEST(History, NamesEachChangePointWithItsCommitDateRunLevelsAndDirection) {
  const std::string text = RenderHistory(ShiftedHistory(), "kernels/copy", "time");
  EXPECT_THAT(text, HasSubstr("kernels/copy time [ms]"));
  EXPECT_THAT(text, HasSubstr("change point at c0mmit4abcde (2026-09-25, run run-4): "
                              "median 10.1 → 12.3 ms, +21.8 % worse, p 0.005"));
}

TEST(History, ImprovementOfAHigherIsBetterMetricReadsBetter) {
  v1::HistoryResponse h = ShiftedHistory();
  h.set_direction(v1::HIGHER_IS_BETTER);
  h.set_unit("GB/s");
  h.mutable_change_points(0)->set_change(-(12.3 / 10.1 - 1));
  EXPECT_THAT(RenderHistory(h, "kernels/copy", "bandwidth"), HasSubstr("-21.8 % better"));
}

TEST(History, WithoutChangePointsPrintsOnlyTheSeries) {
  v1::HistoryResponse h = ShiftedHistory();
  h.clear_change_points();
  const std::string text = RenderHistory(h, "kernels/copy", "time");
  EXPECT_THAT(text, ::testing::Not(HasSubstr("change point")));
  EXPECT_THAT(text, HasSubstr("c0mmit7abcde"));
}

TEST(History, JsonHoldsTheSeriesAndTheChangePoints) {
  const auto doc = nlohmann::json::parse(RenderHistoryJson(ShiftedHistory(), "kernels/copy", "time"));
  EXPECT_EQ(doc["unit"], "ms");
  EXPECT_EQ(doc["direction"], "lower_is_better");
  ASSERT_EQ(doc["points"].size(), 8u);
  EXPECT_EQ(doc["points"][4]["finished_at"], "2026-09-25T14:13:20Z");
  ASSERT_EQ(doc["change_points"].size(), 1u);
  EXPECT_EQ(doc["change_points"][0]["index"], 4);
  EXPECT_EQ(doc["change_points"][0]["run_id"], "run-4");
  EXPECT_DOUBLE_EQ(doc["change_points"][0]["p_value"].get<double>(), 0.005);
}

}  // namespace
}  // namespace perfgate::cli
