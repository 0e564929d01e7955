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

// Count and sum of the values inserted, indexed by their rank among the
// window's distinct values (a Fenwick tree): what a set of points adds up to
// in distance to one value, in O(log n).
class RankSums {
 public:
  explicit RankSums(size_t ranks) : count_(ranks + 1, 0), sum_(ranks + 1, 0) {}
  void Add(size_t rank, double value, int sign) {
    total_count_ += sign;
    total_sum_ += sign * value;
    for (size_t i = rank + 1; i < count_.size(); i += i & (~i + 1)) {
      count_[i] += sign;
      sum_[i] += sign * value;
    }
  }
  // Σ |value - v| over the values held, value having rank `rank`.
  double Distance(size_t rank, double value) const {
    double below = 0, below_sum = 0;  // values of rank <= rank
    for (size_t i = rank + 1; i > 0; i -= i & (~i + 1)) {
      below += count_[i];
      below_sum += sum_[i];
    }
    return (value * below - below_sum) + (total_sum_ - below_sum) - value * (total_count_ - below);
  }

 private:
  std::vector<double> count_, sum_;
  double total_count_ = 0, total_sum_ = 0;
};

// The series' values with the rank of each among its distinct values; a
// permutation moves both together, so ranks are computed once.
struct Ranked {
  std::vector<double> value;
  std::vector<size_t> rank;
  size_t ranks = 0;
};

Ranked Rank(std::span<const double> series) {
  Ranked r{{series.begin(), series.end()}, {}, 0};
  std::vector<double> sorted(series.begin(), series.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  r.ranks = sorted.size();
  for (double v : series) {
    r.rank.push_back(static_cast<size_t>(std::lower_bound(sorted.begin(), sorted.end(), v) - sorted.begin()));
  }
  return r;
}

// Best split of [begin, end) of s with both segments at least min_size long.
// Moving τ by one moves one point from Y to X; the distances of that point to
// X and to Y come from RankSums, so the window costs O(len log n).
Split BestSplit(const Ranked& s, size_t begin, size_t end, size_t min_size) {
  Split best;
  const size_t len = end - begin;
  if (len < 2 * min_size) return best;
  const double* w = s.value.data() + begin;
  const size_t* rank = s.rank.data() + begin;
  double within_y = 0, within_x = 0, cross = 0;
  RankSums x(s.ranks), y(s.ranks);
  for (size_t i = 0; i < len; ++i) {
    within_y += y.Distance(rank[i], w[i]);
    y.Add(rank[i], w[i], +1);
  }
  for (size_t tau = 1; tau + min_size <= len; ++tau) {
    // Point tau-1 leaves Y for X.
    const size_t p = tau - 1;
    y.Add(rank[p], w[p], -1);
    const double to_x = x.Distance(rank[p], w[p]);
    const double to_y = y.Distance(rank[p], w[p]);
    x.Add(rank[p], w[p], +1);
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
Candidate BestCandidate(const Ranked& series, const std::vector<size_t>& bounds, size_t min_size) {
  Candidate best;
  for (size_t w = 0; w + 1 < bounds.size(); ++w) {
    const Split s = BestSplit(series, bounds[w], bounds[w + 1], min_size);
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

size_t BestSplitIndex(std::span<const double> series, size_t min_size) {
  if (std::any_of(series.begin(), series.end(), [](double v) { return !std::isfinite(v); })) return 0;
  return BestSplit(Rank(series), 0, series.size(), std::max<size_t>(min_size, 1)).tau;
}

std::vector<ChangePoint> EDivisive(std::span<const double> series, double significance, unsigned permutations,
                                   size_t min_size, uint64_t seed) {
  std::vector<ChangePoint> found;
  if (std::any_of(series.begin(), series.end(), [](double v) { return !std::isfinite(v); })) return found;
  min_size = std::max<size_t>(min_size, 1);
  std::mt19937_64 rng(seed);
  std::vector<size_t> bounds{0, series.size()};
  const Ranked ranked = Rank(series);
  Ranked shuffled = ranked;
  for (;;) {
    const Candidate candidate = BestCandidate(ranked, bounds, min_size);
    if (candidate.q < 0) break;
    // Under the null each window is exchangeable: shuffle within the windows,
    // never across the change points already accepted. Once so many shuffles
    // came as large that p exceeds the significance, the rest cannot keep the
    // split: stop there (the search ends with this candidate either way).
    unsigned as_large = 0;
    for (unsigned r = 0; r < permutations && (1.0 + as_large) / (1.0 + permutations) <= significance; ++r) {
      shuffled.value = ranked.value;
      shuffled.rank = ranked.rank;
      for (size_t w = 0; w + 1 < bounds.size(); ++w) {
        for (size_t i = bounds[w + 1] - 1; i > bounds[w]; --i) {
          const size_t j = bounds[w] + UniformIndex(rng, i - bounds[w] + 1);
          std::swap(shuffled.value[i], shuffled.value[j]);
          std::swap(shuffled.rank[i], shuffled.rank[j]);
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
