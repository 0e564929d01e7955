#include "suites/cuda/visible_devices.h"

#include <cuda_runtime.h>

#include <string>

namespace perfgate::cuda {

absl::StatusOr<int> VisibleDevices() {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver == 0) return absl::UnavailableError(kNoCudaDriver);
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return absl::UnavailableError(std::string("no CUDA device: ") + cudaGetErrorString(e));
  if (n == 0) return absl::UnavailableError("no CUDA device is visible");
  return n;
}

}  // namespace perfgate::cuda
