#include "suites/cuda/check.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "suites/cuda/cublaslt.h"

namespace perfgate::cuda {

absl::Status CudaError(cudaError_t e, const char* call, const char* file, int line) {
  const std::string message = absl::StrCat(std::string(file), ":", line, ": ", std::string(call), ": ",
                                           std::string(cudaGetErrorName(e)), " (",
                                           std::string(cudaGetErrorString(e)), ")");
  // No driver, no device or a device the machine lacks is the machine, not
  // the code: the caller may skip.
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || e == cudaErrorInvalidDevice) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

absl::Status CublasError(int status, const char* call, const char* file, int line) {
  std::string message =
      absl::StrCat(std::string(file), ":", line, ": ", std::string(call), ": cuBLAS status ", status);
  // The status came from a call into the library, so it is normally loaded.
  if (absl::StatusOr<const CublasLt*> lt = LoadCublasLt(); lt.ok()) {
    absl::StrAppend(&message, " (",
                    std::string((*lt)->GetStatusString(static_cast<cublasStatus_t>(status))), ")");
  }
  return absl::InternalError(message);
}

absl::Status InternalErrorAt(const char* file, int line, absl::string_view message) {
  return absl::InternalError(absl::StrCat(std::string(file), ":", line, ": ", message));
}

void CudaAbort(cudaError_t e, const char* call, const char* file, int line) {
  std::fprintf(stderr, "perfgate: %s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(e),
               cudaGetErrorString(e));
  std::abort();
}

}  // namespace perfgate::cuda
