// The kernels suite: memory bandwidth (copy, triad) and single-precision GEMM.
// The host backend runs everywhere and is the correctness reference of the
// CUDA backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "suites/registry.h"

namespace perfgate::suites::kernels {

/// Registers the host backend's cases: kernels/copy, kernels/triad, kernels/sgemm.
void RegisterHost(Registry& registry);

/// Registers the CUDA backend's cases, in run order: kernels/device_copy,
/// device_triad, gemm, rmsnorm (after the copy it divides by) and ceiling
/// (last, so it reports the best of the run). Without CUDA they are listed
/// and skip with "built without CUDA"; without a GPU they skip with the
/// runtime's reason.
void RegisterGpu(Registry& registry);

/// The peaks MFU divides by (FLOP/s): the best median of this process's
/// run, measured now into a scratch State when no case measured it yet.
/// nullopt when it cannot be had, with `state` failed or skipped and why.
/// Host: OpenBLAS sgemm 1024³ at `threads` threads (the ceiling named
/// HostGemmCeiling(threads), offered by every kernels/sgemm case).
std::optional<double> HostGemmPeak(State& state, int threads);
std::string HostGemmCeiling(int64_t threads);
/// Device: the best cuBLASLt GEMM of `dtype` ("bf16", ...), kernels/gemm at
/// 8192³ when none ran (the ceiling "gemm_<dtype>").
std::optional<double> DeviceGemmPeak(State& state, const std::string& dtype);

/// Reference triad a = b + scalar * c, used to verify every backend.
void TriadReference(const double* b, const double* c, double scalar, double* a, size_t n);

/// Reference single-precision GEMM C = A * B (row-major, M×K times K×N), a
/// plain triple loop in double accumulation, for verifying small sizes.
void GemmReference(const float* a, const float* b, float* c, int m, int n, int k);

/// Fills with uniform values in [0.5, 1.5) from a fixed seed: never zeros.
void FillRandom(float* data, size_t n, unsigned seed);
void FillRandom(double* data, size_t n, unsigned seed);

}  // namespace perfgate::suites::kernels
