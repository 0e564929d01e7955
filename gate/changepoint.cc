#include "gate/changepoint.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "common/stats.h"

namespace perfgate::gate {

using stats::UniformIndex;

namespace {

// Q̂ from the three distance sums of a split into m and n points.
double QHat(double cross, double within_x, double within_y, size_t m, size_t n) {
  if (m == 0 || n == 0) return 0.0;
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  const double e = 2.0 * cross / (dm * dn) - (m > 1 ? within_x * 2.0 / (dm * (dm - 1.0)) : 0.0) -
                   (n > 1 ? within_y * 2.0 / (dn * (dn - 1.0)) : 0.0);
  return dm * dn / (dm + dn) * e;
}

struct Split {
  size_t tau = 0;  // offset within the window of the first point of the second segment
  double q = -1;   // negative: the window admits no split
};

// Best split of w with both segments at least min_size long. Moving τ by one
// moves one point from Y to X, so the three sums update in O(len) per step:
// O(len²) for the window.
Split BestSplit(std::span<const double> w, size_t min_size) {
  Split best;
  const size_t len = w.size();
  if (len < 2 * min_size) return best;
  double cross = 0, within_x = 0, within_y = 0;
  for (size_t i = 0; i < len; ++i) {
    for (size_t j = i + 1; j < len; ++j) within_y += std::fabs(w[i] - w[j]);
  }
  for (size_t tau = 1; tau + min_size <= len; ++tau) {
    // Point tau-1 leaves Y for X.
    const size_t p = tau - 1;
    double to_x = 0, to_y = 0;
    for (size_t i = 0; i < p; ++i) to_x += std::fabs(w[p] - w[i]);
    for (size_t j = tau; j < len; ++j) to_y += std::fabs(w[p] - w[j]);
    within_x += to_x;
    within_y -= to_y;
    cross += to_y - to_x;
    if (tau < min_size) continue;
    const double q = QHat(cross, within_x, within_y, tau, len - tau);
    if (q > best.q) best = {tau, q};
  }
  return best;
}

struct Candidate {
  size_t index = 0;  // in the series
  double q = -1;
};

// Best split over all windows delimited by bounds (sorted, starting at 0 and ending at the size).
Candidate BestCandidate(std::span<const double> series, const std::vector<size_t>& bounds, size_t min_size) {
  Candidate best;
  for (size_t w = 0; w + 1 < bounds.size(); ++w) {
    const Split s = BestSplit(series.subspan(bounds[w], bounds[w + 1] - bounds[w]), min_size);
    if (s.q > best.q) best = {bounds[w] + s.tau, s.q};
  }
  return best;
}

}  // namespace

double EnergyStatistic(std::span<const double> x, std::span<const double> y) {
  double cross = 0, within_x = 0, within_y = 0;
  for (double a : x) {
    for (double b : y) cross += std::fabs(a - b);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    for (size_t k = i + 1; k < x.size(); ++k) within_x += std::fabs(x[i] - x[k]);
  }
  for (size_t j = 0; j < y.size(); ++j) {
    for (size_t k = j + 1; k < y.size(); ++k) within_y += std::fabs(y[j] - y[k]);
  }
  return QHat(cross, within_x, within_y, x.size(), y.size());
}

std::vector<ChangePoint> EDivisive(std::span<const double> series, double significance, unsigned permutations,
                                   size_t min_size, uint64_t seed) {
  std::vector<ChangePoint> found;
  if (std::any_of(series.begin(), series.end(), [](double v) { return !std::isfinite(v); })) return found;
  min_size = std::max<size_t>(min_size, 1);
  std::mt19937_64 rng(seed);
  std::vector<size_t> bounds{0, series.size()};
  std::vector<double> shuffled(series.begin(), series.end());
  for (;;) {
    const Candidate candidate = BestCandidate(series, bounds, min_size);
    if (candidate.q < 0) break;
    // Under the null each window is exchangeable: shuffle within the windows,
    // never across the change points already accepted.
    unsigned as_large = 0;
    for (unsigned r = 0; r < permutations; ++r) {
      std::copy(series.begin(), series.end(), shuffled.begin());
      for (size_t w = 0; w + 1 < bounds.size(); ++w) {
        for (size_t i = bounds[w + 1] - 1; i > bounds[w]; --i) {
          const size_t j = bounds[w] + UniformIndex(rng, i - bounds[w] + 1);
          std::swap(shuffled[i], shuffled[j]);
        }
      }
      if (BestCandidate(shuffled, bounds, min_size).q >= candidate.q) ++as_large;
    }
    const double p = (1.0 + as_large) / (1.0 + permutations);
    if (p > significance) break;
    found.push_back({candidate.index, candidate.q, p});
    bounds.insert(std::upper_bound(bounds.begin(), bounds.end(), candidate.index), candidate.index);
  }
  std::sort(found.begin(), found.end(), [](const ChangePoint& a, const ChangePoint& b) { return a.index < b.index; });
  return found;
}

}  // namespace perfgate::gate
