// The NCCL backend's C++17 face: nvcc compiles nccl_backend.cu as C++17, so
// this header carries none of the suite's C++20 headers; nccl_adapter.cc
// turns it into a Backend. Errors follow suites/cuda/check.h: UNAVAILABLE
// when the machine or build lacks GPUs or NCCL, INTERNAL naming the failed
// call otherwise. Built as nccl_backend_stub.cc, which reports every call
// unavailable, when PERFGATE_WITH_NCCL is off.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "suites/collectives/ops.h"

namespace perfgate::suites::collectives::nccl {

/// OK when NCCL can be loaded; UNAVAILABLE saying why not (or that this
/// build has no NCCL backend). The devices are cuda::VisibleDevices().
absl::Status Available();

/// A fresh ncclUniqueId as bytes (rank 0 makes it; the store carries it).
absl::StatusOr<std::vector<char>> NewUniqueId();

/// The communicators of this process: one per device it drives.
class Communicators {
 public:
  /// One process driving devices 0..ndev-1 as ranks 0..ndev-1 (ncclCommInitAll).
  static absl::StatusOr<std::unique_ptr<Communicators>> CreateLocal(int ndev);
  /// Rank `rank` of `nranks` processes, on `device`, joined through `id`.
  static absl::StatusOr<std::unique_ptr<Communicators>> CreateRank(int rank, int nranks, int device,
                                                                   const std::vector<char>& id);
  /// Frees the buffers and destroys the communicators.
  ~Communicators();

  /// Ranks of the communicator (over every process).
  int ranks() const;
  /// Allocates device buffers for one case (freeing the last case's).
  absl::Status Prepare(Op op, DType dtype, size_t bytes, bool in_place);
  /// Writes InputValue() into every send buffer (by kernel) and clears the outputs.
  absl::Status Fill();
  /// Runs `iters` operations back to back on every local device and returns
  /// the longest device's event-timed span in seconds.
  absl::StatusOr<double> Time(int iters);
  /// Copies each local result back and compares it with ExpectedValue():
  /// empty when right, else op, size, rank and first wrong element.
  /// Rank `corrupt_rank`'s result is altered first (tests only; -1: never).
  absl::StatusOr<std::string> Check(int corrupt_rank);
  /// In-place sum of `count` floats at `device_data` over every rank
  /// (ncclAllReduce, ncclFloat, ncclSum), enqueued on `stream` (a
  /// cudaStream_t) of this process's only communicator; an error when the
  /// process drives more than one device.
  absl::Status AllReduceFloatSum(float* device_data, size_t count, void* stream);

  /// The CUDA and NCCL state; defined in the .cu only.
  struct Impl;

 private:
  explicit Communicators(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfgate::suites::collectives::nccl
