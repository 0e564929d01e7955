#include "suites/cuda/check.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace perfgate::cuda {

absl::Status CudaError(cudaError_t e, const char* call, const char* file, int line) {
  const std::string message = absl::StrCat(std::string(file), ":", line, ": ", std::string(call), ": ",
                                           std::string(cudaGetErrorName(e)), " (",
                                           std::string(cudaGetErrorString(e)), ")");
  // No driver or no device is the machine, not the code: the caller may skip.
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

absl::Status CublasError(int status, const char* call, const char* file, int line) {
  return absl::InternalError(absl::StrCat(std::string(file), ":", line, ": ", std::string(call),
                                          ": cuBLAS status ", status));
}

void CudaAbort(cudaError_t e, const char* call, const char* file, int line) {
  std::fprintf(stderr, "perfgate: %s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(e),
               cudaGetErrorString(e));
  std::abort();
}

}  // namespace perfgate::cuda
