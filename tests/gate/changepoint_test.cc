#include "gate/changepoint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "gate/history_changes.h"
#include "tests/common/random_series.h"

namespace perfgate::gate {
namespace {


// Levels of the given lengths, each with N(0, sd) noise from one seeded stream.
std::vector<double> Levels(std::vector<std::pair<size_t, double>> levels, double sd, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> series;
  for (const auto& [n, level] : levels) {
    const std::vector<double> part = stats::testing::Normal(rng, n, level, sd);
    series.insert(series.end(), part.begin(), part.end());
  }
  return series;
}

TEST(EnergyStatistic, MatchesThePapersFormulaWorkedByHand) {
  // X = {1, 3}, Y = {6, 8, 10}, α = 1, m = 2, n = 3:
  //   Σ|Xi-Yj| = 5+7+9 + 3+5+7 = 36, times 2/(m·n) = 2/6       -> 12
  //   Σ|Xi-Xk| = 2, over C(2,2) = 1                             -> 2
  //   Σ|Yj-Yk| = 2+4+2 = 8, over C(3,2) = 3                     -> 8/3
  //   Ê = 12 - 2 - 8/3 = 22/3;  Q̂ = m·n/(m+n) · Ê = 6/5 · 22/3 = 8.8
  const std::vector<double> x{1, 3}, y{6, 8, 10};
  EXPECT_NEAR(EnergyStatistic(x, y), 8.8, 1e-12);
  EXPECT_NEAR(EnergyStatistic(y, x), 8.8, 1e-12);
  EXPECT_EQ(EnergyStatistic(std::vector<double>{}, y), 0.0);
}

TEST(EDivisive, ReportsTheStatisticOfTheBestSplit) {
  // Splits with both sides >= 2 points: τ = 2 gives 8.8 (above); τ = 3, X = {1,3,6},
  // Y = {8,10}: cross 34·2/6 = 34/3, within X 10/3, within Y 2/1, Ê = 6, Q̂ = 6/5·6 = 7.2.
  // Five points cannot be significant at 0.05 (too few arrangements), so accept any p.
  const std::vector<double> series{1, 3, 6, 8, 10};
  const std::vector<ChangePoint> cps = EDivisive(series, /*significance=*/1.0, 99, /*min_size=*/2);
  ASSERT_EQ(cps.size(), 1u);
  EXPECT_EQ(cps[0].index, 2u);
  EXPECT_NEAR(cps[0].statistic, 8.8, 1e-12);
  EXPECT_GT(cps[0].p_value, 0.0);
  EXPECT_LE(cps[0].p_value, 1.0);
}

// The change points with the largest statistics, by index. Each later step of
// the bisection tests noise at the 5 % level, so a run may add a weak spurious
// split inside a level; the shifts themselves must be the strongest.
std::vector<size_t> Strongest(std::vector<ChangePoint> cps, size_t k) {
  std::sort(cps.begin(), cps.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.statistic > b.statistic; });
  std::vector<size_t> idx;
  for (size_t i = 0; i < std::min(k, cps.size()); ++i) idx.push_back(cps[i].index);
  std::sort(idx.begin(), idx.end());
  return idx;
}

TEST(EDivisive, FindsAClearLevelShiftAtItsFirstPoint) {
  for (uint64_t seed : {21, 22, 23}) {
    const std::vector<double> series = Levels({{20, 100.0}, {20, 110.0}}, 1.0, seed);
    const std::vector<ChangePoint> cps = EDivisive(series);
    ASSERT_FALSE(cps.empty()) << "seed " << seed;
    EXPECT_EQ(Strongest(cps, 1), std::vector<size_t>{20}) << "seed " << seed;
    const auto at = std::find_if(cps.begin(), cps.end(), [](const ChangePoint& c) { return c.index == 20; });
    ASSERT_NE(at, cps.end());
    // The smallest p a test with 199 permutations can give: no shuffle came close.
    EXPECT_DOUBLE_EQ(at->p_value, 1.0 / 200.0);
    const double direct = EnergyStatistic(std::span(series).first(20), std::span(series).subspan(20));
    EXPECT_NEAR(at->statistic, direct, 1e-12 * direct);  // incremental sums round differently
  }
}

TEST(EDivisive, FindsBothOfTwoShiftsSortedByIndex) {
  for (uint64_t seed : {21, 22, 23}) {
    const std::vector<double> series = Levels({{15, 100.0}, {15, 110.0}, {15, 95.0}}, 1.0, seed);
    const std::vector<ChangePoint> cps = EDivisive(series);
    ASSERT_GE(cps.size(), 2u) << "seed " << seed;
    EXPECT_EQ(Strongest(cps, 2), (std::vector<size_t>{15, 30})) << "seed " << seed;
    for (size_t i = 0; i < cps.size(); ++i) {
      EXPECT_LT(cps[i].p_value, 0.05);
      if (i > 0) {
        EXPECT_LT(cps[i - 1].index, cps[i].index);
      }
    }
  }
}

TEST(EDivisive, FindsNothingInAConstantSeries) {
  const std::vector<double> series(30, 42.0);
  EXPECT_TRUE(EDivisive(series).empty());
}

TEST(EDivisive, FindsNothingInPureNoise) {
  for (uint64_t seed : {31, 32, 33}) {
    const std::vector<double> series = Levels({{40, 100.0}}, 1.0, seed);
    EXPECT_TRUE(EDivisive(series).empty()) << "seed " << seed;
  }
}

TEST(EDivisive, SameSeedSameAnswer) {
  const std::vector<double> series = Levels({{12, 10.0}, {12, 10.6}}, 0.5, 23);
  const std::vector<ChangePoint> a = EDivisive(series, 0.05, 199, 3, 5);
  const std::vector<ChangePoint> b = EDivisive(series, 0.05, 199, 3, 5);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].index, b[i].index);
    EXPECT_EQ(a[i].p_value, b[i].p_value);
  }
}

TEST(EDivisive, RespectsTheMinimumSegmentSize) {
  // A shift after two points: with min_size 3 no segment may be that short.
  const std::vector<double> series = Levels({{2, 100.0}, {20, 110.0}}, 0.5, 24);
  for (const ChangePoint& cp : EDivisive(series, 0.05, 199, 3)) {
    EXPECT_GE(cp.index, 3u);
    EXPECT_LE(cp.index, series.size() - 3);
  }
  const std::vector<ChangePoint> short_ok = EDivisive(series, 0.05, 199, 2);
  ASSERT_FALSE(short_ok.empty());
  EXPECT_EQ(short_ok[0].index, 2u);
}

TEST(EDivisive, TheFirstSplitIsTheBestOfAllSplitsEvenWithTiedValues) {
  // With significance 1 the first change kept is the split with the largest
  // Q̂ over the whole series: compare it with every split computed directly.
  // Rounded values make ties, which share a rank in the search's sums.
  for (uint64_t seed : {41, 42, 43}) {
    std::vector<double> series = Levels({{17, 10.0}, {9, 11.0}, {14, 10.5}}, 0.8, seed);
    for (double& v : series) v = std::round(v * 2) / 2;
    const std::vector<ChangePoint> cps = EDivisive(series, 1.0, 19, 3);
    ASSERT_FALSE(cps.empty()) << "seed " << seed;
    double best = -1;
    size_t best_at = 0;
    for (size_t tau = 3; tau + 3 <= series.size(); ++tau) {
      const double q = EnergyStatistic(std::span(series).first(tau), std::span(series).subspan(tau));
      if (q > best) best = q, best_at = tau;
    }
    const auto top = std::max_element(cps.begin(), cps.end(), [](const ChangePoint& a, const ChangePoint& b) {
      return a.statistic < b.statistic;
    });
    EXPECT_EQ(top->index, best_at) << "seed " << seed;
    EXPECT_NEAR(top->statistic, best, 1e-9 * best) << "seed " << seed;
  }
}

TEST(EDivisive, FindsAShiftInTheLongestSeriesAnAnswerCarries) {
  // 5 000 points (kMaxSeriesPoints of the store): a quadratic split search
  // made this take seconds; near-linear, well under one.
  const std::vector<double> series = Levels({{2500, 100.0}, {2500, 103.0}}, 1.0, 44);
  const std::vector<ChangePoint> cps = EDivisive(series);
  ASSERT_FALSE(cps.empty());
  EXPECT_EQ(Strongest(cps, 1), std::vector<size_t>{2500});
}

TEST(EDivisive, TooShortOrNonFiniteSeriesGiveNothing) {
  EXPECT_TRUE(EDivisive(std::vector<double>{1, 2, 3, 4, 5}).empty());  // < 2·min_size
  std::vector<double> series = Levels({{20, 100.0}, {20, 110.0}}, 1.0, 25);
  series[7] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(EDivisive(series).empty());
}

TEST(EDivisive, TheBestSplitIndexIsWhereTheLevelChanges) {
  EXPECT_EQ(BestSplitIndex(Levels({{37, 100.0}, {23, 104.0}}, 1.0, 7)), 37u);
  EXPECT_EQ(BestSplitIndex(std::vector<double>{1.0}), 0u);  // no split of one point
}

// A history of these run medians, one run each.
HistorySeries SeriesOf(const std::vector<double>& medians) {
  HistorySeries h;
  for (size_t i = 0; i < medians.size(); ++i) {
    h.points.push_back({"run-" + std::to_string(i), "c" + std::to_string(i), "main", "n1", {}, medians[i], 10});
  }
  return h;
}

TEST(FindHistoryChanges, ALongSeriesIsSearchedCoarseToFineAndEachChangeLandsOnItsRun) {
  // 10 000 runs (the longest series the API answers): searched over the
  // medians of groups of runs, each change then placed at its run, not at a
  // group's edge.
  const std::vector<double> medians = Levels({{3217, 100.0}, {4444, 104.0}, {2339, 101.0}}, 1.0, 91);
  const std::vector<HistoryChange> found = FindHistoryChanges(SeriesOf(medians));
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].index, 3217u);
  EXPECT_EQ(found[1].index, 3217u + 4444u);
  EXPECT_NEAR(found[0].change, 0.04, 0.005);
  EXPECT_LT(found[1].change, -0.02);  // lower is better: 104 -> 101 is better
  EXPECT_LE(found[0].p_value, 0.05);
}

TEST(FindHistoryChanges, AtTheLengthSearchedRunByRunTheAnswerIsEDivisives) {
  const std::vector<double> medians =
      Levels({{kChangeSearchPoints * 3 / 5, 100.0}, {kChangeSearchPoints * 2 / 5, 103.0}}, 1.0, 5);
  ASSERT_EQ(medians.size(), kChangeSearchPoints);
  const std::vector<HistoryChange> found = FindHistoryChanges(SeriesOf(medians));
  const std::vector<ChangePoint> direct = EDivisive(medians, 0.05, 199, kChangePointMinSize);
  ASSERT_EQ(found.size(), direct.size());
  for (size_t i = 0; i < found.size(); ++i) EXPECT_EQ(found[i].index, direct[i].index);
}

}  // namespace
}  // namespace perfgate::gate
