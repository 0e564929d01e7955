// Error checking for CUDA runtime and cuBLAS(Lt) calls, the one error path of
// every CUDA translation unit: a failed call becomes an absl::Status whose
// message names the file, the line, the call and the library's own words.
// NCCL's variant is nccl_check.h, so this header compiles without NCCL.
// C++17, so .cu files may include it.
#pragma once

#include <cuda_runtime.h>
#include <library_types.h>

#include <string>

#include "absl/status/status.h"

namespace perfgate::cuda {

/// A status for a failed CUDA runtime call: "file:line: call: name (text)".
/// UNAVAILABLE for errors that describe the machine (no driver, no device,
/// a device ordinal it lacks: the case is skipped), INTERNAL otherwise.
absl::Status CudaError(cudaError_t e, const char* call, const char* file, int line);

/// A status for a failed cuBLAS(Lt) call (its cublasStatus_t as an int):
/// "file:line: call: cuBLAS status N (CUBLAS_STATUS_...)", INTERNAL; the
/// name is cuBLASLt's when the library could be loaded.
absl::Status CublasError(int status, const char* call, const char* file, int line);

/// INTERNAL with "file:line: message": for failures our own checks find
/// (a shape no algorithm serves, a misaligned operand), not a library call.
absl::Status InternalErrorAt(const char* file, int line, absl::string_view message);

/// Aborts with file, line and the runtime's message: for calls whose failure
/// is a bug (destructors, invariants), never for what a device may refuse.
void CudaAbort(cudaError_t e, const char* call, const char* file, int line);

}  // namespace perfgate::cuda

/// Returns the CUDA error of `call` as a status naming file and line.
#define PERFGATE_CUDA_RETURN_IF_ERROR(call)                                        \
  do {                                                                             \
    const cudaError_t perfgate_e_ = (call);                                        \
    if (perfgate_e_ != cudaSuccess)                                                \
      return ::perfgate::cuda::CudaError(perfgate_e_, #call, __FILE__, __LINE__);  \
  } while (0)

/// Aborts on a CUDA error of `call`, naming file and line.
#define PERFGATE_CUDA_CHECK(call)                                                  \
  do {                                                                             \
    const cudaError_t perfgate_e_ = (call);                                        \
    if (perfgate_e_ != cudaSuccess)                                                \
      ::perfgate::cuda::CudaAbort(perfgate_e_, #call, __FILE__, __LINE__);         \
  } while (0)

/// Returns the cuBLAS(Lt) error of `call` as a status naming file and line.
#define PERFGATE_CUBLAS_RETURN_IF_ERROR(call)                                           \
  do {                                                                                  \
    const int perfgate_s_ = static_cast<int>(call);                                     \
    if (perfgate_s_ != 0)                                                               \
      return ::perfgate::cuda::CublasError(perfgate_s_, #call, __FILE__, __LINE__);     \
  } while (0)

/// Evaluates a status-returning expression and returns it when not OK.
#define PERFGATE_RETURN_IF_ERROR(expr)            \
  do {                                            \
    ::absl::Status perfgate_st_ = (expr);         \
    if (!perfgate_st_.ok()) return perfgate_st_;  \
  } while (0)
