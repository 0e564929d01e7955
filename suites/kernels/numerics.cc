#include "suites/kernels/numerics.h"

#include <cmath>
#include <cstring>

namespace perfgate::suites::kernels {
namespace {

uint32_t Bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

float FromBits(uint32_t u) {
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
}

}  // namespace

std::optional<GemmDtype> ParseGemmDtype(const std::string& name) {
  for (GemmDtype d : {GemmDtype::kFp32, GemmDtype::kTf32, GemmDtype::kFp16, GemmDtype::kBf16,
                      GemmDtype::kFp8, GemmDtype::kFp8Fp32Out}) {
    if (name == GemmDtypeName(d)) return d;
  }
  return std::nullopt;
}

const char* GemmDtypeName(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp32: return "fp32";
    case GemmDtype::kTf32: return "tf32";
    case GemmDtype::kFp16: return "fp16";
    case GemmDtype::kBf16: return "bf16";
    case GemmDtype::kFp8: return "fp8";
    case GemmDtype::kFp8Fp32Out: return "fp8_f32out";
  }
  return "?";
}

size_t GemmInputBytes(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp32:
    case GemmDtype::kTf32: return 4;
    case GemmDtype::kFp16:
    case GemmDtype::kBf16: return 2;
    case GemmDtype::kFp8:
    case GemmDtype::kFp8Fp32Out: return 1;
  }
  return 4;
}

size_t GemmOutputBytes(GemmDtype dtype) {
  switch (dtype) {
    case GemmDtype::kFp16:
    case GemmDtype::kBf16:
    case GemmDtype::kFp8: return 2;
    case GemmDtype::kFp32:
    case GemmDtype::kTf32:
    case GemmDtype::kFp8Fp32Out: return 4;
  }
  return 4;
}

int GemmMinComputeCapability(GemmDtype dtype) {
  return dtype == GemmDtype::kFp8 || dtype == GemmDtype::kFp8Fp32Out ? 89 : 80;
}

double GemmFlops(int64_t m, int64_t n, int64_t k) {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

double CopyBytesMoved(int64_t bytes) { return 2.0 * static_cast<double>(bytes); }

double TriadBytesMoved(int64_t bytes) {
  const int64_t elements = bytes / static_cast<int64_t>(sizeof(double));
  return 3.0 * static_cast<double>(elements) * sizeof(double);
}

double RmsNormBytesMoved(int64_t rows, int64_t hidden) {
  constexpr double kBf16 = 2;
  return 2.0 * static_cast<double>(rows) * static_cast<double>(hidden) * kBf16 +
         static_cast<double>(hidden) * kBf16;
}

uint16_t FloatToBf16(float x) {
  const uint32_t u = Bits(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  const uint32_t bias = 0x7fffu + ((u >> 16) & 1u);  // ties to even
  return static_cast<uint16_t>((u + bias) >> 16);
}

float Bf16ToFloat(uint16_t bits) { return FromBits(static_cast<uint32_t>(bits) << 16); }

uint16_t FloatToFp16(float x) {
  uint32_t u = Bits(x);
  const auto sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  u &= 0x7fffffffu;
  if (u > 0x7f800000u) return sign | 0x7e00u;     // NaN
  if (u >= 0x477ff000u) return sign | 0x7c00u;    // ≥ 65520 rounds to infinity
  if (u >= 0x38800000u) {                         // ≥ 2^-14: a normal half
    u += 0x0fffu + ((u >> 13) & 1u);              // round the 13 dropped bits, ties to even
    u -= 112u << 23;                              // rebias the exponent 127 → 15
    return static_cast<uint16_t>(sign | (u >> 13));
  }
  // Subnormal: multiples of 2^-24; 1024 is the smallest normal, whose
  // encoding 0x0400 the integer happens to equal.
  const float scaled = FromBits(u) * 16777216.0f;  // exact: a power of two
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
}

float Fp16ToFloat(uint16_t bits) {
  const float sign = (bits & 0x8000u) ? -1.0f : 1.0f;
  const int exp = (bits >> 10) & 0x1f;
  const int mant = bits & 0x3ff;
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 31) return mant ? std::nanf("") : sign * INFINITY;
  return sign * std::ldexp(static_cast<float>(1024 + mant), exp - 25);
}

uint8_t FloatToE4m3(float x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const float a = std::fabs(x);
  if (a >= 448.0f) return sign | 0x7e;  // saturate: 0x7f would be NaN
  if (a < 0.015625f) {                  // below 2^-6: subnormals, multiples of 2^-9
    return sign | static_cast<uint8_t>(std::nearbyint(a * 512.0f));  // 8 encodes 2^-6 itself
  }
  int e = 0;
  const float m = std::frexp(a, &e);  // a = m·2^e, m in [0.5, 1)
  int exponent = e - 1;               // a = (2m)·2^exponent, 2m in [1, 2)
  auto mant = static_cast<int>(std::nearbyint((2.0f * m - 1.0f) * 8.0f));
  if (mant == 8) {
    mant = 0;
    ++exponent;
  }
  const int biased = exponent + 7;
  if (biased > 15 || (biased == 15 && mant == 7)) return sign | 0x7e;
  return static_cast<uint8_t>(sign | (biased << 3) | mant);
}

float E4m3ToFloat(uint8_t bits) {
  const float sign = (bits & 0x80u) ? -1.0f : 1.0f;
  const int exp = (bits >> 3) & 0xf;
  const int mant = bits & 0x7;
  if (exp == 15 && mant == 7) return std::nanf("");
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mant), -9);
  return sign * std::ldexp(static_cast<float>(8 + mant), exp - 10);
}

float RoundToTf32(float x) {
  uint32_t u = Bits(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;  // inf and NaN unchanged
  u += 0x0fffu + ((u >> 13) & 1u);
  return FromBits(u & ~0x1fffu);
}

float RoundToGemmInput(GemmDtype dtype, float x) {
  switch (dtype) {
    case GemmDtype::kFp32: return x;
    case GemmDtype::kTf32: return RoundToTf32(x);
    case GemmDtype::kFp16: return Fp16ToFloat(FloatToFp16(x));
    case GemmDtype::kBf16: return Bf16ToFloat(FloatToBf16(x));
    case GemmDtype::kFp8:
    case GemmDtype::kFp8Fp32Out: return E4m3ToFloat(FloatToE4m3(x));
  }
  return x;
}

GemmTolerance GemmToleranceFor(GemmDtype dtype) {
  const double fp32 = std::ldexp(1.0, -24);
  // Tensor cores do not round each fp32 addition to nearest; two bits of
  // slack cover their truncating adders.
  const double tensor_fp32 = std::ldexp(1.0, -22);
  switch (dtype) {
    case GemmDtype::kFp32: return {fp32, fp32};
    case GemmDtype::kTf32: return {fp32, tensor_fp32};
    case GemmDtype::kFp16: return {std::ldexp(1.0, -11), tensor_fp32};
    case GemmDtype::kBf16: return {std::ldexp(1.0, -8), tensor_fp32};
    case GemmDtype::kFp8: return {std::ldexp(1.0, -8), std::ldexp(1.0, -13)};
    case GemmDtype::kFp8Fp32Out: return {fp32, std::ldexp(1.0, -13)};
  }
  return {fp32, fp32};
}

bool GemmWithinTolerance(double got, double ref, double abs_sum, int64_t k,
                         const GemmTolerance& tol) {
  const double bound =
      2.0 * (tol.output_rel * std::fabs(ref) + static_cast<double>(k) * tol.accumulate_rel * abs_sum);
  return std::fabs(got - ref) <= bound;  // false for NaN
}

void GemmTnReference(const float* a, const float* b, int64_t m, int64_t n, int64_t k, double* c,
                     double* abs_sum) {
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) {
      double acc = 0, mag = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double prod = static_cast<double>(a[i * k + p]) * static_cast<double>(b[j * k + p]);
        acc += prod;
        mag += std::fabs(prod);
      }
      c[i + j * m] = acc;
      abs_sum[i + j * m] = mag;
    }
  }
}

void RmsNormReference(const uint16_t* x, const uint16_t* w, int64_t rows, int64_t hidden,
                      float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t* row = x + r * hidden;
    double ss = 0;
    for (int64_t h = 0; h < hidden; ++h) {
      const double v = Bf16ToFloat(row[h]);
      ss += v * v;
    }
    const double inv = 1.0 / std::sqrt(ss / static_cast<double>(hidden) + eps);
    for (int64_t h = 0; h < hidden; ++h) {
      y[r * hidden + h] = static_cast<float>(Bf16ToFloat(row[h]) * inv * Bf16ToFloat(w[h]));
    }
  }
}

bool RmsNormWithinTolerance(double got, double ref) {
  return std::fabs(got - ref) <= std::ldexp(1.0, -7) * std::fabs(ref) + 1e-6;
}

}  // namespace perfgate::suites::kernels
