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
}  // namespace

double Quantile(std::span<const double> v, double q) {
  if (v.empty()) return kNaN;
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  const double pos = q * static_cast<double>(s.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
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

Summary Summarize(std::span<const double> v) {
  Summary s;
  s.n = static_cast<unsigned>(v.size());
  if (v.empty()) {
    s.median = s.mean = s.stdev = s.min = s.max = s.noise = kNaN;
    s.mad = s.p5 = s.p95 = s.median_ci_low = s.median_ci_high = kNaN;
    return s;
  }
  s.median = Median(v);
  s.mean = Mean(v);
  s.stdev = Stdev(v);
  s.noise = Noise(v);
  const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  s.min = *mn;
  s.max = *mx;
  s.mad = Mad(v);
  s.p5 = Quantile(v, 0.05);
  s.p95 = Quantile(v, 0.95);
  const Interval ci = BootstrapMedianCi(v);
  s.median_ci_low = ci.low;
  s.median_ci_high = ci.high;
  return s;
}

}  // namespace perfgate::stats
