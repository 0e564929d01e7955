#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace perfgate::stats {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

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

Summary Summarize(std::span<const double> v) {
  Summary s;
  s.n = static_cast<unsigned>(v.size());
  if (v.empty()) {
    s.median = s.mean = s.stdev = s.min = s.max = s.noise = kNaN;
    return s;
  }
  s.median = Median(v);
  s.mean = Mean(v);
  s.stdev = Stdev(v);
  s.noise = Noise(v);
  const auto [mn, mx] = std::minmax_element(v.begin(), v.end());
  s.min = *mn;
  s.max = *mx;
  return s;
}

}  // namespace perfgate::stats
