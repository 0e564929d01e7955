// Change points in a series of run medians: where a level shift began, so a
// regression can be traced to the commit that introduced it. E-divisive means
// (Matteson & James 2014) with α = 1, as MongoDB's signal-processing-algorithms
// and Hunter use it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace perfgate::gate {

/// One detected change: the series differs in level before and from index.
struct ChangePoint {
  size_t index = 0;        // first point of the new level
  double statistic = 0;    // EnergyStatistic of the two sides within its window
  double p_value = 1;      // permutation p-value
};

/// Q̂(X, Y; α = 1) of Matteson & James (2014), eq. (4)-(5):
///   m·n/(m+n) · [ 2/(m·n) Σ|Xi-Yj| - C(m,2)⁻¹ Σ_{i<k}|Xi-Xk| - C(n,2)⁻¹ Σ_{j<k}|Yj-Yk| ],
/// a within-sample term being 0 for a sample of one. 0 when either is empty.
double EnergyStatistic(std::span<const double> x, std::span<const double> y);

/// The split of `series` with the largest Q̂, both parts at least min_size
/// long: the offset of the second part's first point, or 0 when the series
/// is shorter than 2 × min_size or holds a non-finite value.
size_t BestSplitIndex(std::span<const double> series, size_t min_size = 1);

/// E-divisive means (Matteson & James 2014, alpha = 1, as in MongoDB's signal-processing-algorithms and Hunter):
/// recursive bisection, each candidate split tested with a seeded permutation test (permutations = 199 default,
/// significance 0.05), minimum segment size min_size (default 3 points). Returns change points sorted by index.
/// Each step splits, among the windows between the change points found so far, the window whose best split has
/// the largest Q̂ (the second segment running to the window's end); the split is kept when
/// p = (1 + #{permutations with max Q̂ >= observed}) / (permutations + 1) <= significance, each permutation
/// shuffling every window independently. A series with a non-finite value gives no change points.
std::vector<ChangePoint> EDivisive(std::span<const double> series, double significance = 0.05,
                                   unsigned permutations = 199, size_t min_size = 3, uint64_t seed = 0x5eed);

}  // namespace perfgate::gate
