// Built when PERFGATE_WITH_CUDA is off: no device is ever visible.
#include "suites/cuda/visible_devices.h"

namespace perfgate::cuda {

absl::StatusOr<int> VisibleDevices() { return absl::UnavailableError("built without CUDA"); }

}  // namespace perfgate::cuda
