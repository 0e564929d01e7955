#include "common/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "tests/common/random_series.h"

namespace perfgate::stats {
namespace {

TEST(Stats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(Median(std::vector<double>{})));
}

TEST(Stats, StdevUsesBesselsCorrection) {
  // Values 2,4,4,4,5,5,7,9: population sd 2, sample sd sqrt(32/7).
  std::vector<double> v{2, 4, 4, 4, 5, 5, 7, 9};
  EXPECT_DOUBLE_EQ(Mean(v), 5.0);
  EXPECT_NEAR(Stdev(v), std::sqrt(32.0 / 7.0), 1e-12);
  EXPECT_NEAR(Noise(v), std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
  EXPECT_EQ(Stdev(std::vector<double>{1}), 0.0);
}

TEST(Stats, MadAndQuantiles) {
  std::vector<double> v{1, 1, 2, 2, 4, 6, 9};
  EXPECT_DOUBLE_EQ(Mad(v), 1.0);  // deviations from 2: 1,1,0,0,2,4,7
  EXPECT_DOUBLE_EQ(Quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(Quantile(v, 1.0), 9.0);
  EXPECT_DOUBLE_EQ(Quantile(std::vector<double>{10, 20}, 0.25), 12.5);
}

TEST(Stats, SummaryOfEmptyIsNaN) {
  Summary s = Summarize(std::vector<double>{});
  EXPECT_EQ(s.n, 0u);
  EXPECT_TRUE(std::isnan(s.median));
  Summary t = Summarize(std::vector<double>{5, 1, 3});
  EXPECT_EQ(t.n, 3u);
  EXPECT_EQ(t.min, 1);
  EXPECT_EQ(t.max, 5);
  EXPECT_EQ(t.median, 3);
}

TEST(Stats, SummaryFillsSpreadQuantilesAndMedianCi) {
  std::vector<double> v{1, 1, 2, 2, 4, 6, 9};
  Summary s = Summarize(v);
  EXPECT_DOUBLE_EQ(s.mad, Mad(v));
  EXPECT_DOUBLE_EQ(s.p5, Quantile(v, 0.05));
  EXPECT_DOUBLE_EQ(s.p95, Quantile(v, 0.95));
  const Interval ci = MedianCi(v);
  EXPECT_EQ(s.median_ci_low, ci.low);
  EXPECT_EQ(s.median_ci_high, ci.high);
  EXPECT_LE(s.median_ci_low, s.median);
  EXPECT_GE(s.median_ci_high, s.median);
  Summary empty = Summarize(std::vector<double>{});
  EXPECT_TRUE(std::isnan(empty.mad));
  EXPECT_TRUE(std::isnan(empty.median_ci_low));
}

TEST(MedianCi, RanksOfTheBinomialTable) {
  // The classical table of distribution-free 95 % intervals of the median:
  // n = 100 -> 40th and 61st values; n = 20 -> 6th and 15th; n = 6 -> 1st
  // and 6th (the smallest n with one); n = 1000 -> 469th and 532nd.
  EXPECT_EQ(MedianCiRank(100), 39u);
  EXPECT_EQ(MedianCiRank(20), 5u);
  EXPECT_EQ(MedianCiRank(6), 0u);
  EXPECT_EQ(MedianCiRank(1000), 468u);
  EXPECT_EQ(MedianCiRank(100, 0.99), 36u);  // 37th and 64th at 99 %
  std::vector<double> v(100);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(99 - i);  // any order
  const Interval ci = MedianCi(v);
  EXPECT_EQ(ci.low, 39.0);
  EXPECT_EQ(ci.high, 60.0);
}

TEST(MedianCi, CoversTheTrueMedianAtLeastAsOftenAsPromised) {
  // Skewed (lognormal, median 1) and small samples: the interval is exact for
  // any continuous distribution, so coverage is >= 95 % (the discreteness
  // makes it a little higher); 4000 trials put the estimate within ~0.7 %.
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(0.0, 1.0);
  for (size_t n : {12u, 41u, 200u}) {
    int covered = 0;
    const int trials = 4000;
    for (int t = 0; t < trials; ++t) {
      std::vector<double> v(n);
      for (double& x : v) x = dist(rng);
      const Interval ci = MedianCi(v);
      if (ci.low <= 1.0 && 1.0 <= ci.high) ++covered;
    }
    const double coverage = static_cast<double>(covered) / trials;
    EXPECT_GT(coverage, 0.94) << "n = " << n;
    EXPECT_LT(coverage, 0.99) << "n = " << n << ": far wider than 95 % asks";
  }
}

TEST(MedianCi, SmallAndDegenerateInputs) {
  EXPECT_TRUE(std::isnan(MedianCi(std::vector<double>{}).low));
  const Interval one = MedianCi(std::vector<double>{7.5});
  EXPECT_EQ(one.low, 7.5);
  EXPECT_EQ(one.high, 7.5);
  const Interval few = MedianCi(std::vector<double>{4, 2, 9});  // below 6 values: min and max
  EXPECT_EQ(few.low, 2);
  EXPECT_EQ(few.high, 9);
  const Interval same = MedianCi(std::vector<double>{3, 3, 3, 3, 3, 3, 3, 3});
  EXPECT_EQ(same.low, 3);
  EXPECT_EQ(same.high, 3);
}

TEST(UniformIndex, StaysInRangeAndReachesEveryValue) {
  std::mt19937_64 rng(7);
  std::vector<int> seen(5, 0);
  for (int i = 0; i < 1000; ++i) {
    const uint64_t k = UniformIndex(rng, 5);
    ASSERT_LT(k, 5u);
    ++seen[k];
  }
  for (int count : seen) EXPECT_GT(count, 100);  // 200 expected; far from 100 if biased or stuck
}

TEST(BootstrapMedianCi, SameSeedGivesTheSameInterval) {
  std::mt19937_64 rng(1);
  const std::vector<double> v = testing::Normal(rng, 50, 10.0, 1.0);
  const Interval a = BootstrapMedianCi(v, 0.95, 500, 42);
  const Interval b = BootstrapMedianCi(v, 0.95, 500, 42);
  EXPECT_EQ(a.low, b.low);
  EXPECT_EQ(a.high, b.high);
  const Interval c = BootstrapMedianCi(v, 0.95, 500, 43);
  EXPECT_TRUE(a.low != c.low || a.high != c.high) << "the seed should drive the resampling";
}

TEST(BootstrapMedianCi, ContainsTheMedianAndLiesWithinTheData) {
  std::mt19937_64 rng(2);
  for (int trial = 0; trial < 5; ++trial) {
    const std::vector<double> v = testing::Normal(rng, 31, 100.0, 5.0);
    const Interval ci = BootstrapMedianCi(v);
    const double med = Median(v);
    EXPECT_LE(ci.low, med);
    EXPECT_GE(ci.high, med);
    EXPECT_LT(ci.low, ci.high);
    EXPECT_GE(ci.low, *std::min_element(v.begin(), v.end()));
    EXPECT_LE(ci.high, *std::max_element(v.begin(), v.end()));
  }
}

TEST(BootstrapMedianCi, NarrowsWithMoreData) {
  std::mt19937_64 rng(3);
  const std::vector<double> small = testing::Normal(rng, 20, 100.0, 5.0);
  const std::vector<double> large = testing::Normal(rng, 2000, 100.0, 5.0);
  const Interval a = BootstrapMedianCi(small);
  const Interval b = BootstrapMedianCi(large);
  // The width goes as 1/sqrt(n): 10x less for 100x the data; ask for 3x.
  EXPECT_LT(3.0 * (b.high - b.low), a.high - a.low);
}

TEST(BootstrapMedianCi, WiderAtHigherConfidence) {
  std::mt19937_64 rng(4);
  const std::vector<double> v = testing::Normal(rng, 40, 0.0, 1.0);
  const Interval ci80 = BootstrapMedianCi(v, 0.80);
  const Interval ci99 = BootstrapMedianCi(v, 0.99);
  EXPECT_LE(ci99.low, ci80.low);
  EXPECT_GE(ci99.high, ci80.high);
  EXPECT_GT(ci99.high - ci99.low, ci80.high - ci80.low);
}

TEST(BootstrapMedianCi, DegenerateInputs) {
  EXPECT_TRUE(std::isnan(BootstrapMedianCi(std::vector<double>{}).low));
  const Interval one = BootstrapMedianCi(std::vector<double>{7.5});
  EXPECT_EQ(one.low, 7.5);
  EXPECT_EQ(one.high, 7.5);
  const Interval same = BootstrapMedianCi(std::vector<double>{3, 3, 3, 3});
  EXPECT_EQ(same.low, 3);
  EXPECT_EQ(same.high, 3);
}

}  // namespace
}  // namespace perfgate::stats
