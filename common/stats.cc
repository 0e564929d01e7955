#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace perfgate::stats {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Median of s, reordering it; nth_element keeps a resample O(n) instead of a sort.
double MedianInPlace(std::vector<double>& s) {
  const size_t mid = s.size() / 2;
  std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(mid), s.end());
  const double upper = s[mid];
  if (s.size() % 2 == 1) return upper;
  const double lower = *std::max_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(mid));
  return lower + 0.5 * (upper - lower);
}

// Quantile() of values already sorted in increasing order.
double SortedQuantile(const std::vector<double>& s, double q) {
  const double pos = q * static_cast<double>(s.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

// MedianCi() of values already sorted in increasing order.
Interval SortedMedianCi(const std::vector<double>& s, double confidence) {
  if (s.empty()) return {};
  const size_t k = MedianCiRank(s.size(), confidence);
  return {s[k], s[s.size() - 1 - k]};
}
}  // namespace

double Quantile(std::span<const double> v, double q) {
  if (v.empty()) return kNaN;
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return SortedQuantile(s, q);
}

double Median(std::span<const double> v) { return Quantile(v, 0.5); }

double Mean(std::span<const double> v) {
  if (v.empty()) return kNaN;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double Stdev(std::span<const double> v) {
  if (v.size() < 2) return 0.0;
  const double m = Mean(v);
  double ss = 0.0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

double Noise(std::span<const double> v) {
  if (v.size() < 2) return 0.0;
  const double m = Mean(v);
  return m == 0.0 ? 0.0 : Stdev(v) / std::fabs(m);
}

double Mad(std::span<const double> v) {
  if (v.empty()) return kNaN;
  const double med = Median(v);
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - med));
  return Median(dev);
}

uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n) {
  // Values below 2^64 mod n would make the low residues more likely; reject them.
  const uint64_t threshold = (0 - n) % n;
  for (;;) {
    const uint64_t r = rng();
    if (r >= threshold) return r % n;
  }
}

double ResampledMedian(std::span<const double> v, std::mt19937_64& rng, std::vector<double>& scratch) {
  scratch.resize(v.size());
  for (double& x : scratch) x = v[UniformIndex(rng, v.size())];
  return MedianInPlace(scratch);
}

Interval BootstrapMedianCi(std::span<const double> v, double confidence, unsigned resamples, uint64_t seed) {
  if (v.empty() || resamples == 0) return {};
  if (v.size() == 1) return {v[0], v[0]};
  std::mt19937_64 rng(seed);
  std::vector<double> medians(resamples), scratch;
  for (double& m : medians) m = ResampledMedian(v, rng, scratch);
  const double tail = (1.0 - confidence) / 2.0;
  return {Quantile(medians, tail), Quantile(medians, 1.0 - tail)};
}

size_t MedianCiRank(size_t n, double confidence) {
  if (n < 2) return 0;
  const double tail = (1.0 - confidence) / 2.0;
  // The true median lies below s[r] only when at most r values fall below
  // it: P(B <= r), B ~ Binomial(n, 1/2). The rank is the largest r with
  // P(B <= r) <= tail, summed term by term in log space (2^-n underflows
  // for n > 1074); the loop stops at the first r past the tail, after about
  // n/2 - sqrt(n) terms.
  const double dn = static_cast<double>(n);
  double log_pmf = -dn * std::log(2.0);
  double cdf = 0.0;
  size_t rank = 0;
  for (size_t j = 0; j < n / 2; ++j) {
    cdf += std::exp(log_pmf);
    if (cdf > tail) break;
    rank = j;
    log_pmf += std::log((dn - static_cast<double>(j)) / static_cast<double>(j + 1));
  }
  return rank;
}

Interval MedianCi(std::span<const double> v, double confidence) {
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return SortedMedianCi(s, confidence);
}

Summary Summarize(std::span<const double> v) {
  Summary s;
  s.n = static_cast<unsigned>(v.size());
  if (v.empty()) {
    s.median = s.mean = s.stdev = s.min = s.max = s.noise = kNaN;
    s.mad = s.p5 = s.p95 = s.median_ci_low = s.median_ci_high = kNaN;
    return s;
  }
  // One sort serves the median, the quantiles, min, max and the interval;
  // the same arithmetic as Median(), Quantile() and Mad().
  std::vector<double> sorted(v.begin(), v.end());
  std::sort(sorted.begin(), sorted.end());
  s.median = SortedQuantile(sorted, 0.5);
  s.mean = Mean(v);
  s.stdev = Stdev(v);
  s.noise = Noise(v);
  s.min = sorted.front();
  s.max = sorted.back();
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - s.median));
  std::sort(dev.begin(), dev.end());
  s.mad = SortedQuantile(dev, 0.5);
  s.p5 = SortedQuantile(sorted, 0.05);
  s.p95 = SortedQuantile(sorted, 0.95);
  const Interval ci = SortedMedianCi(sorted, 0.95);
  s.median_ci_low = ci.low;
  s.median_ci_high = ci.high;
  return s;
}

size_t MinCountForQuantileBound(double q, double confidence) {
  if (!(q > 0 && q < 1) || !(confidence > 0 && confidence < 1)) return 0;
  // 1 - q^n >= confidence  <=>  n >= ln(1 - confidence) / ln q; the
  // epsilon keeps an exact integer ratio from rounding up past itself.
  return static_cast<size_t>(std::ceil(std::log1p(-confidence) / std::log(q) - 1e-9));
}

Interval QuantileCi(std::span<const double> v, double q, double confidence) {
  Interval out;
  if (v.empty() || !(q > 0 && q < 1)) return out;
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  const size_t n = s.size();
  const double tail = (1.0 - confidence) / 2.0;
  // The binomial cdf term by term in log space: P(B = j) for j = 0..n.
  const double dn = static_cast<double>(n);
  double log_pmf = dn * std::log1p(-q), cdf = 0.0;
  for (size_t j = 0; j <= n; ++j) {
    if (j > 0) {
      const double dj = static_cast<double>(j);
      log_pmf += std::log((dn - dj + 1) / dj) + std::log(q) - std::log1p(-q);
    }
    cdf += std::exp(log_pmf);  // P(B <= j): the chance that s[j] lies above the quantile
    if (j < n && cdf <= tail) out.low = s[j];
    if (cdf >= 1.0 - tail) {
      if (j < n) out.high = s[j];
      break;
    }
  }
  return out;
}

}  // namespace perfgate::stats
