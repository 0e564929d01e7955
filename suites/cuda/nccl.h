// NCCL, opened at run time as cuBLASLt is (cublaslt.h): the agent must start,
// and its NCCL cases skip with the reason, on machines without libnccl.
// Built with PERFGATE_WITH_NCCL only. C++17, so .cu files may include it.
#pragma once

#include <nccl.h>

#include "absl/status/statusor.h"

namespace perfgate::cuda {

/// The NCCL entry points the suites call.
struct Nccl {
  decltype(&::ncclGetErrorString) GetErrorString;
  decltype(&::ncclGetUniqueId) GetUniqueId;
  decltype(&::ncclCommInitRank) CommInitRank;
  decltype(&::ncclCommInitAll) CommInitAll;
  decltype(&::ncclCommDestroy) CommDestroy;
  decltype(&::ncclGroupStart) GroupStart;
  decltype(&::ncclGroupEnd) GroupEnd;
  decltype(&::ncclAllReduce) AllReduce;
  decltype(&::ncclAllGather) AllGather;
  decltype(&::ncclReduceScatter) ReduceScatter;
  decltype(&::ncclBroadcast) Broadcast;
  decltype(&::ncclSend) Send;
  decltype(&::ncclRecv) Recv;
};

/// libnccl.so.2 (else libnccl.so), loaded on first use and kept for the
/// process's lifetime; UNAVAILABLE saying why when it cannot be opened or
/// lacks an entry point.
absl::StatusOr<const Nccl*> LoadNccl();

}  // namespace perfgate::cuda
