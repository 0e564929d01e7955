// The kernels suite's CUDA backend: case bodies compiled by nvcc as C++17.
// gpu_kernels.cc registers them and adapts each State to a CaseHost. Every
// body verifies its kernel against a host reference at a small size before
// measuring, and returns UNAVAILABLE (skip) when the machine cannot run it.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "suites/cuda/case_host.h"
#include "suites/kernels/numerics.h"

namespace perfgate::suites::kernels::gpu {

/// The shape of a GEMM case: C (M×N) = A (M×K) · B (K×N).
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};

/// kernels/gemm: C = A·B through cuBLASLt (A row-major M×K, B column-major
/// K×N, so both are read along K; C column-major), inputs from a fixed seed,
/// cold samples with two operand sets rotated and L2 flushed before each.
absl::Status RunGemm(GemmDtype dtype, const GemmShape& shape, uint64_t seed, cuda::CaseHost& host);

/// Checks cuBLASLt's product of `dtype` at `shape` (small) against the fp64
/// host product of the same rounded inputs, and the device's conversion of
/// the inputs against the host emulation. INTERNAL with the numbers if wrong.
absl::Status VerifyGemm(GemmDtype dtype, const GemmShape& shape, uint64_t seed);

/// kernels/device_copy: a 16-byte vectorised copy of `bytes` (a multiple of
/// 16); bandwidth counts read + written.
absl::Status RunDeviceCopy(int64_t bytes, cuda::CaseHost& host);

/// kernels/device_triad: a = b + 3·c on doubles, arrays of `bytes` each.
absl::Status RunDeviceTriad(int64_t bytes, cuda::CaseHost& host);

/// The largest hidden size the fused RMSNorm kernel holds in registers.
inline constexpr int64_t kRmsNormMaxHidden = 16384;

/// kernels/rmsnorm: fused bf16 RMSNorm of rows × hidden (hidden a multiple
/// of 8, at most kRmsNormMaxHidden), fp32 accumulation; its roof fraction
/// divides by `roof_gbs`.
absl::Status RunRmsNorm(int64_t rows, int64_t hidden, double roof_gbs, cuda::CaseHost& host);

}  // namespace perfgate::suites::kernels::gpu
