// Descriptive statistics of samples. Every function takes the values it
// summarizes; none of them filters throttled samples (callers do).
#pragma once

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

/// Summary of one metric over a run's unthrottled samples.
struct Summary {
  unsigned n = 0;
  double median = 0, mean = 0, stdev = 0, min = 0, max = 0, noise = 0;
};
/// Summarizes v; an empty v gives n = 0 and NaN statistics.
Summary Summarize(std::span<const double> v);

}  // namespace perfgate::stats
