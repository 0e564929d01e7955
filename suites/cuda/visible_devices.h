// How many CUDA devices this process sees: the one check every suite makes
// before it touches a device. Free of CUDA headers, so host code of a build
// without CUDA includes it too (it then links visible_devices_stub.cc).
#pragma once

#include "absl/status/statusor.h"

namespace perfgate::cuda {

/// The CUDA devices this process sees (cudaGetDeviceCount; no context is
/// created): at least 1, or UNAVAILABLE saying why: "no CUDA device: " and
/// the runtime's error, "no CUDA device is visible", or "built without
/// CUDA" in a build without CUDA.
absl::StatusOr<int> VisibleDevices();

}  // namespace perfgate::cuda
