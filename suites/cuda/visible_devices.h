// How many CUDA devices this process sees: the one check every suite makes
// before it touches a device. Free of CUDA headers, so host code of a build
// without CUDA includes it too (it then links visible_devices_stub.cc).
#pragma once

#include "absl/status/statusor.h"

namespace perfgate::cuda {

/// What every path says of a machine with no CUDA driver at all (the
/// cases' skips, `perfgate-agent run`'s and `probe`'s GPU line), where the
/// runtime itself says "driver version is insufficient", which reads as if
/// an upgrade were needed.
inline constexpr char kNoCudaDriver[] = "no CUDA driver installed on this machine";

/// The CUDA devices this process sees (cudaDriverGetVersion, then
/// cudaGetDeviceCount; no context is created): at least 1, or UNAVAILABLE
/// saying why: kNoCudaDriver, "no CUDA device: " and the runtime's error,
/// "no CUDA device is visible", or "built without CUDA" in a build without
/// CUDA.
absl::StatusOr<int> VisibleDevices();

}  // namespace perfgate::cuda
