#include "common/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

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

}  // namespace
}  // namespace perfgate::stats
