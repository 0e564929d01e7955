#include "gate/inference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/stats.h"
#include "tests/common/random_series.h"

namespace perfgate::gate {
namespace {

using stats::Median;
using stats::Stdev;


// Reference values computed by SciPy; tests/data/make_stats_reference.py says how.
const nlohmann::json& Reference() {
  static const nlohmann::json ref = [] {
    std::ifstream in(std::string(PERFGATE_TEST_DATA_DIR) + "/stats_reference.json");
    if (!in) ADD_FAILURE() << "cannot open stats_reference.json under " << PERFGATE_TEST_DATA_DIR;
    return in ? nlohmann::json::parse(in) : nlohmann::json::object();
  }();
  return ref;
}

std::vector<double> Doubles(const nlohmann::json& j) { return j.get<std::vector<double>>(); }

void ExpectRelativelyNear(double actual, double expected, double rel, const std::string& what) {
  EXPECT_NEAR(actual, expected, rel * std::fabs(expected)) << what;
}

TEST(RelativeChange, IsPositiveWhenTheMetricGotWorseInEitherDirection) {
  // Time (lower is better) from 10 to 11: 10 % worse.
  EXPECT_DOUBLE_EQ(RelativeChange(10.0, 11.0, false), 0.1);
  EXPECT_DOUBLE_EQ(RelativeChange(10.0, 9.0, false), -0.1);
  // Throughput (higher is better) from 10 to 9: 10 % worse.
  EXPECT_DOUBLE_EQ(RelativeChange(10.0, 9.0, true), 0.1);
  EXPECT_DOUBLE_EQ(RelativeChange(10.0, 11.0, true), -0.1);
}

TEST(RelativeChange, IsNaNWithoutAUsableBaseline) {
  EXPECT_TRUE(std::isnan(RelativeChange(0.0, 1.0, false)));
  EXPECT_TRUE(std::isnan(RelativeChange(std::nan(""), 1.0, true)));
}

TEST(BootstrapRelativeChange, CatchesAFivePercentSlowdownWithItsSign) {
  std::mt19937_64 rng(11);
  const std::vector<double> base = stats::testing::Normal(rng, 30, 100.0, 1.0);
  const std::vector<double> slower = stats::testing::Normal(rng, 30, 105.0, 1.0);
  const ChangeEstimate time = BootstrapRelativeChange(base, slower, /*higher_is_better=*/false);
  EXPECT_DOUBLE_EQ(time.change, RelativeChange(Median(base), Median(slower), false));
  EXPECT_GT(time.ci.low, 0.0);
  EXPECT_LE(time.ci.low, time.change);
  EXPECT_GE(time.ci.high, time.change);
  // The same numbers as a throughput went up: an improvement, so negative.
  const ChangeEstimate rate = BootstrapRelativeChange(base, slower, /*higher_is_better=*/true);
  EXPECT_LT(rate.ci.high, 0.0);
  EXPECT_LE(rate.ci.low, rate.change);
  EXPECT_GE(rate.ci.high, rate.change);
}

TEST(BootstrapRelativeChange, SameSeedSameIntervalAndNoChangeStraddlesZero) {
  std::mt19937_64 rng(12);
  const std::vector<double> a = stats::testing::Normal(rng, 25, 50.0, 1.0);
  const std::vector<double> b = stats::testing::Normal(rng, 25, 50.0, 1.0);
  const ChangeEstimate x = BootstrapRelativeChange(a, b, false, 0.95, 1000, 99);
  const ChangeEstimate y = BootstrapRelativeChange(a, b, false, 0.95, 1000, 99);
  EXPECT_EQ(x.ci.low, y.ci.low);
  EXPECT_EQ(x.ci.high, y.ci.high);
  EXPECT_LT(x.ci.low, 0.0);
  EXPECT_GT(x.ci.high, 0.0);
}

TEST(BootstrapRelativeChange, NarrowsWithMoreSamples) {
  std::mt19937_64 rng(13);
  const ChangeEstimate few =
      BootstrapRelativeChange(stats::testing::Normal(rng, 10, 100.0, 2.0), stats::testing::Normal(rng, 10, 100.0, 2.0), false);
  const ChangeEstimate many =
      BootstrapRelativeChange(stats::testing::Normal(rng, 1000, 100.0, 2.0), stats::testing::Normal(rng, 1000, 100.0, 2.0), false);
  EXPECT_LT(3.0 * (many.ci.high - many.ci.low), few.ci.high - few.ci.low);
}

TEST(BootstrapRelativeChange, EmptySideGivesNaN) {
  const ChangeEstimate e = BootstrapRelativeChange(std::vector<double>{}, std::vector<double>{1.0}, false);
  EXPECT_TRUE(std::isnan(e.change));
  EXPECT_TRUE(std::isnan(e.ci.low));
}

TEST(MannWhitneyU, AgreesWithScipyForEveryMethodOrderAndTieCase) {
  const nlohmann::json& cases = Reference().at("mannwhitneyu");
  ASSERT_GE(cases.size(), 10u);
  for (const nlohmann::json& c : cases) {
    const std::string name = c.at("name");
    const std::vector<double> x = Doubles(c.at("x")), y = Doubles(c.at("y"));
    const struct {
      const char* key;
      MannWhitneyMethod method;
    } methods[] = {{"auto", MannWhitneyMethod::kAuto},
                   {"exact", MannWhitneyMethod::kExact},
                   {"asymptotic", MannWhitneyMethod::kAsymptotic}};
    for (const auto& m : methods) {
      const MannWhitneyResult r = MannWhitneyU(x, y, m.method);
      const std::string what = name + " method=" + m.key;
      EXPECT_DOUBLE_EQ(r.u, c.at(m.key).at("u").get<double>()) << what;
      ExpectRelativelyNear(r.p_value, c.at(m.key).at("p").get<double>(), 1e-6, what);
    }
    EXPECT_EQ(MannWhitneyU(x, y).exact, c.at("auto_is_exact").get<bool>()) << name;
  }
}

TEST(MannWhitneyU, IdenticalSamplesGiveOne) {
  const std::vector<double> a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(MannWhitneyU(a, a).p_value, 1.0);
  const std::vector<double> flat(12, 4.0);
  EXPECT_EQ(MannWhitneyU(flat, flat).p_value, 1.0);  // all tied: zero variance
}

TEST(MannWhitneyU, EmptyOrNaNInputGivesNaN) {
  EXPECT_TRUE(std::isnan(MannWhitneyU(std::vector<double>{}, std::vector<double>{1.0}).p_value));
  EXPECT_TRUE(std::isnan(MannWhitneyU(std::vector<double>{std::nan(""), 1.0}, std::vector<double>{2.0}).u));
}

TEST(MannWhitneyExactSf, IsADistributionSymmetricAboutItsMean) {
  // P(U >= 0) = 1; P(U >= m·n + 1) = 0; P(U >= k) + P(U >= m·n - k + 1) = 1 by symmetry.
  EXPECT_DOUBLE_EQ(MannWhitneyExactSf(4, 6, 0), 1.0);
  EXPECT_EQ(MannWhitneyExactSf(4, 6, 25), 0.0);
  for (int k = 0; k <= 24; ++k) {
    EXPECT_NEAR(MannWhitneyExactSf(4, 6, k) + MannWhitneyExactSf(4, 6, 24 - k + 1), 1.0, 1e-15) << k;
  }
  // The single most extreme arrangement out of C(10, 4) = 210.
  EXPECT_NEAR(MannWhitneyExactSf(4, 6, 24), 1.0 / 210.0, 1e-17);
  EXPECT_DOUBLE_EQ(MannWhitneyExactSf(6, 4, 20), MannWhitneyExactSf(4, 6, 20));
}

TEST(MannWhitneyExactSf, MatchesTheClosedFormForOneAgainstMany) {
  // With m = 1, U is the rank of the single x among n + 1 slots, uniform on
  // 0..n: P(U >= k) = (n - k + 1) / (n + 1).
  const unsigned n = 1000;
  for (unsigned k : {1u, 2u, 10u, 500u, 999u, 1000u}) {
    EXPECT_NEAR(MannWhitneyExactSf(1, n, k), (n - k + 1.0) / (n + 1.0), 1e-14) << k;
  }
}

TEST(MannWhitneyU, AutoStaysExactForOneSmallSampleAgainstAManyValuedOne) {
  std::vector<double> few{0.5, 10.5, 20.5}, many;
  for (int i = 0; i < 100000; ++i) many.push_back(i);
  const MannWhitneyResult r = MannWhitneyU(few, many);
  EXPECT_TRUE(r.exact);
  EXPECT_DOUBLE_EQ(r.u, 1.0 + 11.0 + 21.0);
  // Arrangements with U = k for m = 3 are the partitions of k into at most
  // three parts (n is never binding here): round((k + 3)² / 12) of them.
  double lower_tail = 0;
  for (int k = 0; k <= 33; ++k) lower_tail += std::round((k + 3.0) * (k + 3.0) / 12.0);
  const double arrangements = 100003.0 * 100002.0 * 100001.0 / 6.0;
  ExpectRelativelyNear(r.p_value, 2.0 * lower_tail / arrangements, 1e-9, "3 vs 100000");
}

// Benjamini & Hochberg (1995), J. R. Statist. Soc. B 57(1), §4: the fifteen
// p-values of their example. At q = 0.05 the procedure rejects the four
// smallest (p(4) = 0.0095 <= 4/15·0.05, and no larger k qualifies), which the
// paper reports; Bonferroni rejects only three.
const std::vector<double> kBh1995{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
                                  0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.0000};

TEST(BenjaminiHochberg, RejectsTheFourHypothesesOfThePapersExample) {
  const std::vector<double> adj = BenjaminiHochberg(kBh1995);
  ASSERT_EQ(adj.size(), kBh1995.size());
  for (size_t i = 0; i < adj.size(); ++i) EXPECT_EQ(adj[i] <= 0.05, i < 4) << i;
}

TEST(BenjaminiHochberg, AdjustedValuesFollowTheStepUpDefinition) {
  // adj(i) = min_{j >= i} p(j)·15/j, worked by hand:
  //   p(4): 0.0095·15/4 = 0.035625 (every later p(j)·15/j is larger)
  //   p(5): 0.0201·15/5 = 0.0603
  //   p(6), p(7): min(0.0278·15/6 = 0.0695, 0.0298·15/7 = 0.063857...) = 0.063857...
  //   p(10): 0.3240·15/10 = 0.486;  p(15): 1.0
  const std::vector<double> adj = BenjaminiHochberg(kBh1995);
  EXPECT_NEAR(adj[0], 0.0015, 1e-12);
  EXPECT_NEAR(adj[3], 0.035625, 1e-12);
  EXPECT_NEAR(adj[4], 0.0603, 1e-12);
  EXPECT_NEAR(adj[5], 0.0298 * 15.0 / 7.0, 1e-12);
  EXPECT_NEAR(adj[6], 0.0298 * 15.0 / 7.0, 1e-12);
  EXPECT_NEAR(adj[9], 0.486, 1e-12);
  EXPECT_EQ(adj[14], 1.0);
  for (size_t i = 1; i < adj.size(); ++i) EXPECT_LE(adj[i - 1], adj[i]);
}

TEST(BenjaminiHochberg, KeepsInputOrderCapsAtOneAndSkipsNaN) {
  std::vector<double> shuffled = kBh1995;
  std::reverse(shuffled.begin(), shuffled.end());
  std::swap(shuffled[2], shuffled[9]);
  const std::vector<double> sorted_adj = BenjaminiHochberg(kBh1995);
  const std::vector<double> adj = BenjaminiHochberg(shuffled);
  for (size_t i = 0; i < shuffled.size(); ++i) {
    const size_t at = std::find(kBh1995.begin(), kBh1995.end(), shuffled[i]) - kBh1995.begin();
    EXPECT_DOUBLE_EQ(adj[i], sorted_adj[at]) << i;
  }
  const std::vector<double> capped = BenjaminiHochberg(std::vector<double>{0.9, 0.8});
  EXPECT_EQ(capped[0], 0.9);
  EXPECT_EQ(capped[1], 0.9);
  const std::vector<double> with_nan = BenjaminiHochberg(std::vector<double>{0.01, std::nan(""), 0.04});
  EXPECT_TRUE(std::isnan(with_nan[1]));
  EXPECT_DOUBLE_EQ(with_nan[0], 0.02);  // two tests counted, not three
  EXPECT_DOUBLE_EQ(with_nan[2], 0.04);
  EXPECT_TRUE(BenjaminiHochberg(std::vector<double>{}).empty());
}

TEST(PairedTShift, IsTheOneSampleTOfTheDifferences) {
  // d = 1..5 %: mean 3 %, sd 1.5811 %, se = sd / sqrt(5) = 0.70711 %,
  // t = 4.2426 on 4 d.o.f.; t(0.975, 4) = 2.776445, so the interval is
  // 3 % +- 1.9632 %, and the two-sided p lies between 0.01 (t(0.995, 4) =
  // 4.604) and 0.02 (t(0.99, 4) = 3.747).
  const std::vector<double> d = {0.01, 0.02, 0.03, 0.04, 0.05};
  const gate::ShiftEstimate s = gate::PairedTShift(d);
  EXPECT_NEAR(s.shift, 0.03, 1e-12);
  EXPECT_NEAR(s.ci.low, 0.03 - 0.0196320, 1e-6);
  EXPECT_NEAR(s.ci.high, 0.03 + 0.0196320, 1e-6);
  EXPECT_GT(s.p_value, 0.01);
  EXPECT_LT(s.p_value, 0.02);
  EXPECT_EQ(s.df, 4.0);
  EXPECT_TRUE(std::isnan(gate::PairedTShift(std::vector<double>{0.01}).shift));
}

TEST(CompareWithHistory, MatchesScipyStudentTIntervalAndPValue) {
  const nlohmann::json& cases = Reference().at("history");
  ASSERT_FALSE(cases.empty());
  for (const nlohmann::json& c : cases) {
    const std::string name = c.at("name");
    const std::vector<double> h = Doubles(c.at("history"));
    const double cand = c.at("candidate");
    const double conf = c.at("confidence");
    for (bool higher : {false, true}) {
      const HistoryComparison r = CompareWithHistory(h, cand, higher, conf);
      const std::string what = name + (higher ? " higher" : " lower");
      const double centre = Median(h);
      EXPECT_EQ(r.history_runs, h.size());
      EXPECT_DOUBLE_EQ(r.change, RelativeChange(centre, cand, higher)) << what;
      ExpectRelativelyNear(r.p_value, c.at("p").get<double>(), 1e-6, what);
      const double a = RelativeChange(centre, c.at("prediction_low").get<double>(), higher);
      const double b = RelativeChange(centre, c.at("prediction_high").get<double>(), higher);
      EXPECT_NEAR(r.ci.low, std::min(a, b), 1e-9) << what;
      EXPECT_NEAR(r.ci.high, std::max(a, b), 1e-9) << what;
      EXPECT_NEAR(r.change_ci.high - r.change_ci.low, r.ci.high - r.ci.low, 1e-9) << what;
      EXPECT_LE(r.change_ci.low, r.change);
      EXPECT_GE(r.change_ci.high, r.change);
    }
  }
}

TEST(CompareWithHistory, IntervalUsesScipyStudentTQuantileForEachRunCountAndConfidence) {
  const nlohmann::json& cases = Reference().at("t_quantiles");
  ASSERT_FALSE(cases.empty());
  for (const nlohmann::json& c : cases) {
    const int df = c.at("df");
    const double prob = c.at("prob");
    std::vector<double> h;
    for (int i = 0; i <= df; ++i) h.push_back(10.0 + i);
    const double k = static_cast<double>(h.size());
    const HistoryComparison r = CompareWithHistory(h, 10.0, false, 2.0 * prob - 1.0);
    // ci spans 2·t·s·sqrt(1 + 1/K) around the mean, divided by the median.
    const double t = (r.ci.high - r.ci.low) * Median(h) / (2.0 * Stdev(h) * std::sqrt(1.0 + 1.0 / k));
    ExpectRelativelyNear(t, c.at("q").get<double>(), 1e-6, "df=" + std::to_string(df) + " prob=" + std::to_string(prob));
  }
}

TEST(CompareWithHistory, SlowerCandidateIsAPositiveChangeForTimeAndNegativeForRate) {
  const std::vector<double> h{100.2, 99.1, 100.9, 100.4, 99.6};
  const HistoryComparison time = CompareWithHistory(h, 110.0, false);
  const HistoryComparison rate = CompareWithHistory(h, 110.0, true);
  EXPECT_GT(time.change, 0.0);
  EXPECT_GT(time.change, time.ci.high);  // outside where an unchanged run would fall
  EXPECT_LT(rate.change, 0.0);
  EXPECT_LT(rate.change, rate.ci.low);
  EXPECT_EQ(time.p_value, rate.p_value);
  EXPECT_LT(time.p_value, 0.01);
}

TEST(CompareWithHistory, FewerThanTwoRunsGiveNoIntervalOrPValue) {
  const HistoryComparison one = CompareWithHistory(std::vector<double>{10.0}, 11.0, false);
  EXPECT_DOUBLE_EQ(one.change, 0.1);
  EXPECT_TRUE(std::isnan(one.p_value));
  EXPECT_TRUE(std::isnan(one.ci.low));
  EXPECT_EQ(one.history_runs, 1u);
  const HistoryComparison none = CompareWithHistory(std::vector<double>{}, 11.0, false);
  EXPECT_TRUE(std::isnan(none.change));
  EXPECT_EQ(none.history_runs, 0u);
}

TEST(CompareWithHistory, IdenticalHistoryGivesAZeroWidthInterval) {
  const std::vector<double> h{5.0, 5.0, 5.0};
  EXPECT_EQ(CompareWithHistory(h, 5.0, false).p_value, 1.0);
  const HistoryComparison moved = CompareWithHistory(h, 5.5, false);
  EXPECT_EQ(moved.p_value, 0.0);
  EXPECT_EQ(moved.ci.low, 0.0);
  EXPECT_EQ(moved.ci.high, 0.0);
}

}  // namespace
}  // namespace perfgate::gate
