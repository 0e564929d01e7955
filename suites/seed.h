// Fixed seeds and the counter-based generator every suite draws its inputs
// from: a case's seed is a hash of its key, and element i of seeded data is
// a function of (seed, i) alone, so the host and the device produce the same
// values, runs repeat exactly, and any element can be recomputed to check it.
// C++17, so nvcc translation units include it too.
#pragma once

#include <cstdint>
#include <string_view>

#include "suites/host_device.h"

namespace perfgate::suites {

/// SplitMix64's increment, 2^64 / golden ratio.
inline constexpr uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ull;

/// The fixed seed of a case's random inputs: FNV-1a of its key, the same on
/// every compiler and run (std::hash promises neither).
inline uint64_t CaseSeed(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ull;  // the FNV offset basis
  for (unsigned char c : key) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

/// SplitMix64's output function (Steele, Lea and Flood, 2014): a bijection
/// of 64 bits whose every output bit depends on every input bit.
PERFGATE_HOST_DEVICE inline uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// One SplitMix64 step from state `x`: Mix64(x + kGoldenGamma).
PERFGATE_HOST_DEVICE inline uint64_t SplitMix64(uint64_t x) { return Mix64(x + kGoldenGamma); }

/// A deterministic value in [-1, 1) for element `i` of the data seeded by
/// `seed`, identical on host and device, so device fills need no upload and
/// the host can recompute any element. Never all zeros; a multiple of 2^-23.
PERFGATE_HOST_DEVICE inline float HashUniform(uint64_t seed, uint64_t i) {
  const uint64_t z = Mix64(seed * kGoldenGamma + i + 0x632be59bd9b4e019ull);
  const auto bits = static_cast<uint32_t>(z >> 40);  // 24 bits
  return static_cast<float>(bits) * (1.0f / 8388608.0f) - 1.0f;
}

}  // namespace perfgate::suites
