// Descriptive statistics of samples. Every function takes the values it
// summarizes; none of them filters throttled samples (callers do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

namespace perfgate::stats {

/// Median (mean of the two middle values for even n). NaN when empty.
double Median(std::span<const double> v);
/// Arithmetic mean. NaN when empty.
double Mean(std::span<const double> v);
/// Sample standard deviation (Bessel, n-1). 0 for n < 2.
double Stdev(std::span<const double> v);
/// Relative noise: stdev / |mean|. 0 for n < 2 or a zero mean.
double Noise(std::span<const double> v);
/// Median absolute deviation from the median (unscaled).
double Mad(std::span<const double> v);
/// Linear-interpolated quantile, q in [0, 1]. NaN when empty.
double Quantile(std::span<const double> v, double q);

/// A closed interval; both ends NaN when it could not be estimated.
struct Interval {
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
};

/// Uniform draw from [0, n), n > 0, by rejection sampling: the same seed gives
/// the same draws with every standard library (std::uniform_int_distribution
/// does not promise that).
uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n);

/// Median of one with-replacement resample of a non-empty v (same size), drawn from rng;
/// scratch is reused between calls to avoid an allocation per resample.
double ResampledMedian(std::span<const double> v, std::mt19937_64& rng, std::vector<double>& scratch);

/// Distribution-free interval of the median from order statistics: the
/// k-th smallest and k-th largest values, k the largest rank with
/// P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2, so it covers the true
/// median with at least `confidence` for any continuous distribution. Exact,
/// no resampling: O(n log n) for the sort, O(n) for the ranks. Below the
/// smallest n for which such an interval exists (6 at 95 %) it is [min, max].
/// Empty v gives NaN ends; a single value gives [v, v].
Interval MedianCi(std::span<const double> v, double confidence = 0.95);
/// The 0-based rank k of MedianCi for n sorted values: the interval is
/// [sorted[k], sorted[n-1-k]].
size_t MedianCiRank(size_t n, double confidence = 0.95);

/// The fewest values whose order statistics bound the q-quantile from above
/// with `confidence`, whatever the distribution: the smallest n with
/// 1 - q^n >= confidence (the largest of n values then lies above the
/// quantile with that probability), ceil(ln(1 - confidence) / ln q): 5 for
/// the median, 29 for p90, 299 for p99 at 95 %. A percentile from fewer
/// values has no such bound and is not a gating value.
size_t MinCountForQuantileBound(double q, double confidence = 0.95);

/// Distribution-free two-sided interval of the q-quantile (0 < q < 1) from
/// order statistics: [s[l], s[u]] with B ~ Binomial(n, q) the count below
/// the true quantile, l the largest rank with P(B <= l) <= (1 - confidence) / 2
/// and u the smallest with P(B <= u) >= (1 + confidence) / 2 (0-based ranks).
/// An end that needs a rank outside the values is NaN (too few values).
Interval QuantileCi(std::span<const double> v, double q, double confidence = 0.95);

/// Seeded percentile-bootstrap CI of the median (same data + seed → same CI).
/// Empty v gives NaN ends; a single value gives [v, v].
Interval BootstrapMedianCi(std::span<const double> v, double confidence = 0.95, unsigned resamples = 2000,
                           uint64_t seed = 0x5eed);

/// Summary of one metric over a run's unthrottled samples.
struct Summary {
  unsigned n = 0;
  double median = 0, mean = 0, stdev = 0, min = 0, max = 0, noise = 0;
  double mad = 0;                                  // unscaled, as Mad()
  double p5 = 0, p95 = 0;                          // as Quantile()
  double median_ci_low = 0, median_ci_high = 0;    // MedianCi() at 95 %
};
/// Summarizes v (one sort); an empty v gives n = 0 and NaN statistics.
Summary Summarize(std::span<const double> v);

}  // namespace perfgate::stats
