#include "suites/kernels/numerics.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "suites/seed.h"

namespace perfgate::suites::kernels {
namespace {

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(Bf16, RoundsOneAndKnownPatterns) {
  EXPECT_EQ(FloatToBf16(1.0f), 0x3F80);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xC000);
  EXPECT_EQ(Bf16ToFloat(0x3F80), 1.0f);
}

TEST(Bf16, BreaksTiesToEven) {
  EXPECT_EQ(FloatToBf16(FromBits(0x3F808000)), 0x3F80);  // halfway, even below
  EXPECT_EQ(FloatToBf16(FromBits(0x3F818000)), 0x3F82);  // halfway, even above
  EXPECT_EQ(FloatToBf16(FromBits(0x3F808001)), 0x3F81);  // just past halfway
}

TEST(Bf16, OverflowsToInfinityAndKeepsNaN) {
  EXPECT_EQ(FloatToBf16(FLT_MAX), 0x7F80);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(NAN))));
}

TEST(Bf16, EveryFiniteEncodingSurvivesARoundTrip) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7F80) == 0x7F80) continue;  // inf and NaN
    ASSERT_EQ(FloatToBf16(Bf16ToFloat(static_cast<uint16_t>(b))), b) << std::hex << b;
  }
}

TEST(Fp16, EncodesKnownValues) {
  EXPECT_EQ(FloatToFp16(1.0f), 0x3C00);
  EXPECT_EQ(FloatToFp16(65504.0f), 0x7BFF);              // largest finite
  EXPECT_EQ(FloatToFp16(65519.0f), 0x7BFF);              // below the halfway point
  EXPECT_EQ(FloatToFp16(65520.0f), 0x7C00);              // halfway to 2^16: even is infinity
  EXPECT_EQ(FloatToFp16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(FloatToFp16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even: zero
  EXPECT_EQ(FloatToFp16(std::ldexp(3.0f, -25)), 0x0002);  // tie to even: two
  EXPECT_EQ(FloatToFp16(-0.0f), 0x8000);
}

TEST(Fp16, EveryFiniteEncodingSurvivesARoundTrip) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if ((b & 0x7C00) == 0x7C00) continue;
    ASSERT_EQ(FloatToFp16(Fp16ToFloat(static_cast<uint16_t>(b))), b) << std::hex << b;
  }
}

TEST(E4m3, SaturatesAtFourHundredFortyEight) {
  EXPECT_EQ(FloatToE4m3(448.0f), 0x7E);
  EXPECT_EQ(E4m3ToFloat(0x7E), 448.0f);
  EXPECT_EQ(FloatToE4m3(464.0f), 0x7E);  // would round to 480, which e4m3 lacks
  EXPECT_EQ(FloatToE4m3(1e6f), 0x7E);
  EXPECT_EQ(FloatToE4m3(INFINITY), 0x7E);
  EXPECT_EQ(FloatToE4m3(-448.0f), 0xFE);
  EXPECT_EQ(FloatToE4m3(NAN), 0x7F);
  EXPECT_TRUE(std::isnan(E4m3ToFloat(0x7F)));
}

TEST(E4m3, EncodesOneSubnormalsAndTies) {
  EXPECT_EQ(FloatToE4m3(1.0f), 0x38);
  EXPECT_EQ(FloatToE4m3(std::ldexp(1.0f, -9)), 0x01);   // smallest subnormal
  EXPECT_EQ(FloatToE4m3(std::ldexp(1.0f, -6)), 0x08);   // smallest normal
  EXPECT_EQ(FloatToE4m3(1.0625f), 0x38);                // tie between 1 and 1.125: even
  EXPECT_EQ(FloatToE4m3(1.1875f), 0x3A);                // tie between 1.125 and 1.25: even
  EXPECT_EQ(FloatToE4m3(1.97f), 0x40);                  // rounds up into the next binade
}

TEST(E4m3, EveryFiniteEncodingSurvivesARoundTrip) {
  for (uint32_t b = 0; b < 0x100; ++b) {
    if ((b & 0x7F) == 0x7F) continue;
    ASSERT_EQ(FloatToE4m3(E4m3ToFloat(static_cast<uint8_t>(b))), b) << std::hex << b;
  }
}

TEST(Tf32, KeepsTenMantissaBitsRoundingToEven) {
  EXPECT_EQ(RoundToTf32(1.0f), 1.0f);
  EXPECT_EQ(RoundToTf32(1.0f + std::ldexp(1.0f, -11)), 1.0f);                         // tie, even
  EXPECT_EQ(RoundToTf32(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));  // tie, even
  EXPECT_EQ(RoundToTf32(1.0f + std::ldexp(1.0f, -12)), 1.0f);
  EXPECT_TRUE(std::isinf(RoundToTf32(INFINITY)));
}

TEST(GemmDtype, NamesParseBackAndSizesMatchTheirTypes) {
  for (GemmDtype d : {GemmDtype::kFp32, GemmDtype::kTf32, GemmDtype::kFp16, GemmDtype::kBf16,
                      GemmDtype::kFp8, GemmDtype::kFp8Fp32Out}) {
    EXPECT_EQ(ParseGemmDtype(GemmDtypeName(d)), d);
  }
  EXPECT_FALSE(ParseGemmDtype("int8").has_value());
  EXPECT_EQ(GemmInputBytes(GemmDtype::kFp8), 1u);
  EXPECT_EQ(GemmOutputBytes(GemmDtype::kFp8), 2u);        // bf16 out
  EXPECT_EQ(GemmOutputBytes(GemmDtype::kFp8Fp32Out), 4u);
  EXPECT_EQ(GemmInputBytes(GemmDtype::kTf32), 4u);        // stored as fp32
  EXPECT_EQ(GemmMinComputeCapability(GemmDtype::kFp8), 89);
  EXPECT_EQ(GemmMinComputeCapability(GemmDtype::kBf16), 80);
}

TEST(Counting, GemmFlopsAreTwoMnkAndCopiesCountReadPlusWrite) {
  EXPECT_EQ(GemmFlops(8192, 8192, 28672), 2.0 * 8192 * 8192 * 28672);
  EXPECT_EQ(GemmFlops(3, 5, 7), 210.0);
  EXPECT_EQ(CopyBytesMoved(1000), 2000.0);
  EXPECT_EQ(TriadBytesMoved(800), 2400.0);
  EXPECT_EQ(TriadBytesMoved(804), 2400.0);  // a partial double is not moved
  EXPECT_EQ(RmsNormBytesMoved(4, 10), 4 * 10 * 2 * 2 + 10 * 2.0);
}

TEST(GemmTnReference, ReadsARowMajorAndBColumnMajor) {
  // A = [[1,2,3],[4,5,6]] (2x3 row-major); B = [[7,8],[9,10],[11,12]] stored
  // by columns: (7,9,11), (8,10,12). C column-major: C[i + j*2].
  const float a[] = {1, 2, 3, 4, 5, 6};
  const float b[] = {7, 9, 11, 8, 10, 12};
  double c[4], mag[4];
  GemmTnReference(a, b, 2, 2, 3, c, mag);
  EXPECT_EQ(c[0], 58);   // C[0,0]
  EXPECT_EQ(c[1], 139);  // C[1,0]
  EXPECT_EQ(c[2], 64);   // C[0,1]
  EXPECT_EQ(c[3], 154);  // C[1,1]
  const float neg[] = {-1, 2, -3, 4, -5, 6};
  GemmTnReference(neg, b, 2, 2, 3, c, mag);
  EXPECT_EQ(mag[0], 58);  // Σ|a·b| ignores the signs
}

TEST(GemmTolerance, AcceptsOutputRoundingAndRejectsARealError) {
  const GemmTolerance bf16 = GemmToleranceFor(GemmDtype::kBf16);
  const double ref = 3.14159, abs_sum = 20;
  const double rounded = Bf16ToFloat(FloatToBf16(static_cast<float>(ref)));
  EXPECT_TRUE(GemmWithinTolerance(rounded, ref, abs_sum, 64, bf16));
  EXPECT_FALSE(GemmWithinTolerance(ref * 1.02, ref, abs_sum, 64, bf16));
  EXPECT_FALSE(GemmWithinTolerance(NAN, ref, abs_sum, 64, bf16));
  const GemmTolerance fp32 = GemmToleranceFor(GemmDtype::kFp32);
  EXPECT_FALSE(GemmWithinTolerance(ref * (1 + 1e-4), ref, abs_sum, 64, fp32));
  // fp8's accumulator is coarser than fp16's, its tolerance wider.
  EXPECT_GT(GemmToleranceFor(GemmDtype::kFp8).accumulate_rel,
            GemmToleranceFor(GemmDtype::kFp16).accumulate_rel);
}

TEST(RmsNormReference, NormalisesEachRowByItsRootMeanSquare) {
  // Row 0 all ones (rms 1); row 1 all twos (rms 2): both normalise to w.
  const std::vector<uint16_t> x = {FloatToBf16(1), FloatToBf16(1), FloatToBf16(1), FloatToBf16(1),
                                   FloatToBf16(2), FloatToBf16(-2), FloatToBf16(2), FloatToBf16(2)};
  const std::vector<uint16_t> w = {FloatToBf16(0.5f), FloatToBf16(1), FloatToBf16(2), FloatToBf16(4)};
  std::vector<float> y(8);
  RmsNormReference(x.data(), w.data(), 2, 4, 0.0f, y.data());
  EXPECT_FLOAT_EQ(y[0], 0.5f);
  EXPECT_FLOAT_EQ(y[3], 4.0f);
  EXPECT_FLOAT_EQ(y[5], -1.0f);
  EXPECT_FLOAT_EQ(y[6], 2.0f);
  EXPECT_TRUE(RmsNormWithinTolerance(Bf16ToFloat(FloatToBf16(1.2345f)), 1.2345));
  EXPECT_FALSE(RmsNormWithinTolerance(1.2345 * 1.01, 1.2345));
}

TEST(HashUniform, IsSeededBoundedAndVaried) {
  std::set<float> seen;
  double sum = 0;
  for (uint64_t i = 0; i < 4096; ++i) {
    const float v = HashUniform(7, i);
    EXPECT_EQ(v, HashUniform(7, i));
    EXPECT_GE(v, -1.0f);
    EXPECT_LT(v, 1.0f);
    seen.insert(v);
    sum += v;
  }
  EXPECT_GT(seen.size(), 4000u);
  EXPECT_LT(std::fabs(sum / 4096), 0.05);  // centred: products do not all share a sign
  EXPECT_NE(HashUniform(7, 0), HashUniform(8, 0));
}

}  // namespace
}  // namespace perfgate::suites::kernels
