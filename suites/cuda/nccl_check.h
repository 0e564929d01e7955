// Error checking for NCCL calls in check.h's style: a failed call becomes a
// status naming the file, the line, the call and NCCL's own words. A header
// of its own so that check.h compiles where NCCL is absent; built with
// PERFGATE_WITH_NCCL only. C++17, so .cu files may include it.
#pragma once

#include <nccl.h>

#include "absl/status/status.h"

namespace perfgate::cuda {

/// A status for a failed NCCL call: "file:line: call: ncclName (NCCL's
/// text)", INTERNAL.
absl::Status NcclError(ncclResult_t result, const char* call, const char* file, int line);

}  // namespace perfgate::cuda

/// Returns the NCCL error of `call` as a status naming file and line.
#define PERFGATE_NCCL_RETURN_IF_ERROR(call)                                         \
  do {                                                                              \
    const ncclResult_t perfgate_r_ = (call);                                        \
    if (perfgate_r_ != ncclSuccess)                                                 \
      return ::perfgate::cuda::NcclError(perfgate_r_, #call, __FILE__, __LINE__);   \
  } while (0)
