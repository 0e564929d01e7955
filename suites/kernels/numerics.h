// Host-side arithmetic of the kernels suite's CUDA backend: the GEMM dtypes,
// FLOP and byte counts, bit-exact emulation of the device's roundings
// (bf16, fp16, fp8 e4m3, tf32), the host references the device results are
// checked against, and the tolerances they are checked with. Plain C++17
// with no CUDA dependency, so it is unit-tested on machines without a GPU
// and included by the .cu files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace perfgate::suites::kernels {

/// The input and output types of a GEMM case.
enum class GemmDtype {
  kFp32,        // fp32 in and out, fp32 math
  kTf32,        // fp32 in and out, tf32 tensor-core math
  kFp16,        // fp16 in and out, fp32 accumulate
  kBf16,        // bf16 in and out, fp32 accumulate
  kFp8,         // fp8 e4m3 in, bf16 out, fp32 accumulate, per-tensor scales
  kFp8Fp32Out,  // fp8 e4m3 in, fp32 out
};

/// "fp32", "tf32", "fp16", "bf16", "fp8" (e4m3 in, bf16 out), "fp8_f32out";
/// nullopt for anything else.
std::optional<GemmDtype> ParseGemmDtype(const std::string& name);
/// The parameter value that names `dtype` (inverse of ParseGemmDtype).
const char* GemmDtypeName(GemmDtype dtype);
/// Bytes of one element of A and B.
size_t GemmInputBytes(GemmDtype dtype);
/// Bytes of one element of C.
size_t GemmOutputBytes(GemmDtype dtype);
/// The compute capability (major*10+minor) the dtype needs: 89 for fp8, else 80.
int GemmMinComputeCapability(GemmDtype dtype);

/// FLOPs of C = A·B with A M×K and B K×N: 2·M·N·K (β ignored).
double GemmFlops(int64_t m, int64_t n, int64_t k);
/// Bytes a copy of `bytes` moves: read plus written.
double CopyBytesMoved(int64_t bytes);
/// Bytes triad a = b + s·c on doubles moves for arrays of `bytes` each:
/// b and c read, a written.
double TriadBytesMoved(int64_t bytes);
/// Bytes a bf16 RMSNorm of rows × hidden moves: x read, y written, the
/// weight (hidden elements) read once.
double RmsNormBytesMoved(int64_t rows, int64_t hidden);

/// float → bf16 bits, round to nearest even (as __float2bfloat16_rn).
uint16_t FloatToBf16(float x);
/// bf16 bits → float (exact).
float Bf16ToFloat(uint16_t bits);
/// float → IEEE fp16 bits, round to nearest even, subnormals kept, overflow
/// to infinity (as __float2half_rn).
uint16_t FloatToFp16(float x);
/// fp16 bits → float (exact).
float Fp16ToFloat(uint16_t bits);
/// float → fp8 e4m3 bits, round to nearest even, saturating to ±448, NaN to
/// 0x7F (as __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3)).
uint8_t FloatToE4m3(float x);
/// fp8 e4m3 bits → float (exact; 0x7F/0xFF are NaN).
float E4m3ToFloat(uint8_t bits);
/// float rounded to tf32 (10 explicit mantissa bits), nearest even.
float RoundToTf32(float x);
/// `x` as the GEMM's inputs hold it after conversion to the dtype.
float RoundToGemmInput(GemmDtype dtype, float x);

/// How far a device GEMM element may lie from the fp64 reference of the
/// same (already rounded) inputs.
struct GemmTolerance {
  double output_rel;      // unit roundoff of the output type
  double accumulate_rel;  // per-addition error of the tensor-core accumulator
};
/// The tolerance of a dtype. Products of rounded inputs are exact in fp32,
/// so the error is the accumulation (fp32 for fp32/tf32/fp16/bf16; fp8
/// tensor cores accumulate with about 14 bits on Hopper) plus the rounding
/// of the output.
GemmTolerance GemmToleranceFor(GemmDtype dtype);
/// |got − ref| ≤ 2·(output_rel·|ref| + k·accumulate_rel·abs_sum), where
/// abs_sum = Σ|a·b| of the element's dot product (a standard error bound).
bool GemmWithinTolerance(double got, double ref, double abs_sum, int64_t k, const GemmTolerance& tol);

/// Reference C = A·B in fp64 in the CUDA backend's layout: A row-major M×K,
/// B column-major K×N (each column's K values contiguous), C column-major
/// M×N. Also writes Σ|a·b| per element to `abs_sum` for the tolerance.
void GemmTnReference(const float* a, const float* b, int64_t m, int64_t n, int64_t k, double* c,
                     double* abs_sum);

/// Reference RMSNorm y = x / sqrt(mean(x²) + eps) · w of bf16 rows, fp64
/// math, result as float (the device rounds it to bf16).
void RmsNormReference(const uint16_t* x, const uint16_t* w, int64_t rows, int64_t hidden,
                      float eps, float* y);
/// A bf16 RMSNorm output is right when within two bf16 ulps (2^-7 relative)
/// of the reference, plus an absolute 1e-6 for values near zero.
bool RmsNormWithinTolerance(double got, double ref);

}  // namespace perfgate::suites::kernels
