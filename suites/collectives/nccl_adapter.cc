#include "suites/collectives/nccl_adapter.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "suites/collectives/nccl_backend.h"
#include "suites/cuda/visible_devices.h"

namespace perfgate::suites::collectives {
namespace {

// The backend's UNAVAILABLE (no GPU, no NCCL) becomes FAILED_PRECONDITION,
// the code on which RunCase skips; in this suite UNAVAILABLE is the
// rendezvous or a peer going away, which fails a case.
absl::Status ToStatus(const absl::Status& s) {
  if (absl::IsUnavailable(s)) return absl::FailedPreconditionError(s.message());
  return s;
}

class NcclBackend final : public Backend {
 public:
  explicit NcclBackend(std::shared_ptr<nccl::Communicators> comms) : comms_(std::move(comms)) {}
  int ranks() const override { return comms_->ranks(); }
  absl::Status Fill() override { return ToStatus(comms_->Fill()); }
  absl::StatusOr<double> Time(int iters) override {
    absl::StatusOr<double> s = comms_->Time(iters);
    if (!s.ok()) return ToStatus(s.status());
    return s;
  }
  absl::StatusOr<std::string> Check(int corrupt_rank) override {
    absl::StatusOr<std::string> wrong = comms_->Check(corrupt_rank);
    if (!wrong.ok()) return ToStatus(wrong.status());
    return wrong;
  }

 private:
  std::shared_ptr<nccl::Communicators> comms_;
};

// This process's communicators: every visible device (or --gpus) when the
// world has one rank, else this rank's device joined through the store. The
// backend's errors pass through ToStatus, the store's as they are.
absl::StatusOr<std::unique_ptr<nccl::Communicators>> MakeCommunicators(World& world, int visible) {
  if (world.size() == 1) {
    const int gpus = world.options().gpus > 0 ? world.options().gpus : visible;
    if (gpus > visible) {
      return absl::InvalidArgumentError(
          absl::StrCat("--gpus ", gpus, " but only ", visible, " CUDA devices are visible"));
    }
    auto made = nccl::Communicators::CreateLocal(gpus);
    if (!made.ok()) return ToStatus(made.status());
    return made;
  }
  std::vector<char> id;
  if (world.rank() == 0) {
    absl::StatusOr<std::vector<char>> made = nccl::NewUniqueId();
    if (!made.ok()) return ToStatus(made.status());
    id = *std::move(made);
  }
  auto shared = world.ShareFromRoot("nccl_unique_id", std::move(id));
  PERFGATE_RETURN_IF_ERROR(shared);
  const int device = WorldDevice(world, visible);
  if (device >= visible) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", world.rank(), ": device ", device, " but only ", visible, " are visible"));
  }
  auto made = nccl::Communicators::CreateRank(world.rank(), world.size(), device, *shared);
  if (!made.ok()) return ToStatus(made.status());
  return made;
}

}  // namespace

absl::StatusOr<std::shared_ptr<nccl::Communicators>> WorldCommunicators(World& world) {
  if (world.nccl) return std::static_pointer_cast<nccl::Communicators>(world.nccl);
  // NCCL first, then the devices: a build or machine without NCCL says so.
  if (absl::Status s = nccl::Available(); !s.ok()) return ToStatus(s);
  absl::StatusOr<int> visible = cuda::VisibleDevices();
  if (!visible.ok()) return ToStatus(visible.status());
  absl::StatusOr<std::unique_ptr<nccl::Communicators>> made = MakeCommunicators(world, *visible);
  PERFGATE_RETURN_IF_ERROR(made);
  std::shared_ptr<nccl::Communicators> comms(*std::move(made));
  world.nccl = comms;
  return comms;
}

int WorldDevice(const World& world, int visible) {
  return RankDevice(world.options().device, std::getenv("SLURM_LOCALID"), world.rank(), visible);
}

int RankDevice(int device, const char* slurm_localid, int rank, int visible) {
  if (device >= 0) return device;
  if (visible <= 0) return 0;
  int local = 0;
  if (slurm_localid != nullptr && absl::SimpleAtoi(slurm_localid, &local) && local >= 0) {
    return local % visible;
  }
  return rank % visible;
}

absl::StatusOr<std::unique_ptr<Backend>> MakeNcclBackend(World& world, Op op, size_t bytes,
                                                          bool in_place, DType dtype,
                                                          Layout* layout) {
  auto comms = WorldCommunicators(world);
  PERFGATE_RETURN_IF_ERROR(comms);
  *layout = LayoutOf(op, bytes, (*comms)->ranks(), dtype);
  PERFGATE_RETURN_IF_ERROR(ToStatus((*comms)->Prepare(op, dtype, bytes, in_place)));
  return std::unique_ptr<Backend>(new NcclBackend(*comms));
}

}  // namespace perfgate::suites::collectives
