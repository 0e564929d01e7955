#include "suites/cuda/nccl_check.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "suites/cuda/nccl.h"

namespace perfgate::cuda {
namespace {

// ncclResult_t's enumerators as nccl.h spells them; NCCL itself only offers
// the description (ncclGetErrorString).
std::string ResultName(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return absl::StrCat("ncclResult_t ", static_cast<int>(r));
  }
}

}  // namespace

absl::Status NcclError(ncclResult_t result, const char* call, const char* file, int line) {
  std::string message =
      absl::StrCat(std::string(file), ":", line, ": ", std::string(call), ": ", ResultName(result));
  // The result came from a call into the library, so it is loaded.
  if (absl::StatusOr<const Nccl*> nccl = LoadNccl(); nccl.ok()) {
    absl::StrAppend(&message, " (", std::string((*nccl)->GetErrorString(result)), ")");
  }
  return absl::InternalError(message);
}

}  // namespace perfgate::cuda
