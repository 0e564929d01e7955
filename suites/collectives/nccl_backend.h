// The NCCL backend's C++17 face: nvcc compiles nccl_backend.cu as C++17, so
// this header carries no abseil and none of the suite's C++20 headers;
// nccl_adapter.cc turns it into a Backend. Built as nccl_backend_stub.cc,
// which reports every call unavailable, when PERFGATE_WITH_NCCL is off.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "suites/collectives/ops.h"

namespace perfgate::suites::collectives::nccl {

/// The outcome of a call: empty message when it worked.
struct Error {
  std::string message;
  bool unavailable = false;  // the machine or build lacks GPUs or NCCL: skip, not fail
  bool ok() const { return message.empty(); }
};

/// CUDA devices this process sees; 0 with the reason in *error when none.
int VisibleDevices(Error* error);

/// A fresh ncclUniqueId as bytes (rank 0 makes it; the store carries it).
Error NewUniqueId(std::vector<char>* id);

/// The communicators of this process: one per device it drives.
class Communicators {
 public:
  /// One process driving devices 0..ndev-1 as ranks 0..ndev-1 (ncclCommInitAll).
  static Error CreateLocal(int ndev, std::unique_ptr<Communicators>* out);
  /// Rank `rank` of `nranks` processes, on `device`, joined through `id`.
  static Error CreateRank(int rank, int nranks, int device, const std::vector<char>& id,
                          std::unique_ptr<Communicators>* out);
  /// Frees the buffers and destroys the communicators.
  ~Communicators();

  /// Ranks of the communicator (over every process).
  int ranks() const;
  /// Allocates device buffers for one case (freeing the last case's).
  Error Prepare(Op op, DType dtype, size_t bytes, bool in_place);
  /// Writes InputValue() into every send buffer (by kernel) and clears the outputs.
  Error Fill();
  /// Runs `iters` operations back to back on every local device and returns
  /// the longest device's event-timed span in *seconds.
  Error Time(int iters, double* seconds);
  /// Copies each local result back and compares it with ExpectedValue();
  /// *wrong is empty when right, else op, size, rank and first wrong element.
  /// Rank `corrupt_rank`'s result is altered first (tests only; -1: never).
  Error Check(int corrupt_rank, std::string* wrong);
  /// In-place sum of `count` floats at `device_data` over every rank
  /// (ncclAllReduce, ncclFloat, ncclSum), enqueued on `stream` (a
  /// cudaStream_t) of this process's only communicator; an error when the
  /// process drives more than one device.
  Error AllReduceFloatSum(float* device_data, size_t count, void* stream);

  /// The CUDA and NCCL state; defined in the .cu only.
  struct Impl;

 private:
  explicit Communicators(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfgate::suites::collectives::nccl
