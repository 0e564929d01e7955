// The NCCL backend as a Backend: communicators made once per World (all
// visible devices of one process when the world has one rank, else one device
// per rank joined through the rendezvous store). Internal to the suite.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "suites/collectives/backend.h"
#include "suites/collectives/world.h"

namespace perfgate::suites::collectives {

/// Prepares `op` on the world's NCCL communicators and sets *layout for their
/// rank count. FAILED_PRECONDITION when this machine or build has no GPU or no
/// NCCL (the case skips); other errors fail it.
/// The CUDA device of a rank that drives one GPU, counted among the `visible`
/// ones: `device` when given (>= 0), else Slurm's local task id
/// (`slurm_localid`, may be null), else `rank`; the last two modulo `visible`,
/// since Slurm binding one GPU per task leaves each task seeing only its own.
int RankDevice(int device, const char* slurm_localid, int rank, int visible);

namespace nccl {
class Communicators;
}  // namespace nccl

/// The world's NCCL communicators, made on first use and kept in
/// World::nccl: every visible device (or --gpus) of this process when the
/// world has one rank, else this rank's device (RankDevice) joined through
/// the rendezvous store. FAILED_PRECONDITION without a GPU or NCCL.
absl::StatusOr<std::shared_ptr<nccl::Communicators>> WorldCommunicators(World& world);

/// The CUDA device this rank drives (RankDevice over the visible devices).
int WorldDevice(const World& world, int visible);

absl::StatusOr<std::unique_ptr<Backend>> MakeNcclBackend(World& world, Op op, size_t bytes,
                                                          bool in_place, DType dtype,
                                                          Layout* layout);

}  // namespace perfgate::suites::collectives
