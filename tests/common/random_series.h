// Seeded noise for statistics tests, written out so the same seed gives the
// same series with every standard library (std::normal_distribution does not).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

namespace perfgate::stats::testing {

/// Uniform in (0, 1): 53 random bits, never exactly 0.
inline double Uniform01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
}

/// n draws from a normal distribution (Box–Muller).
inline std::vector<double> Normal(std::mt19937_64& rng, size_t n, double mean, double sd) {
  std::vector<double> v;
  v.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const double r = std::sqrt(-2.0 * std::log(Uniform01(rng)));
    v.push_back(mean + sd * r * std::cos(2.0 * std::numbers::pi * Uniform01(rng)));
  }
  return v;
}

}  // namespace perfgate::stats::testing
