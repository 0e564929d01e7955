#include "suites/collectives/nccl_adapter.h"

#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "suites/collectives/nccl_backend.h"

namespace perfgate::suites::collectives {
namespace {

absl::Status ToStatus(const nccl::Error& e) {
  if (e.ok()) return absl::OkStatus();
  if (e.unavailable) return absl::FailedPreconditionError(e.message);
  return absl::InternalError(e.message);
}

class NcclBackend final : public Backend {
 public:
  explicit NcclBackend(std::shared_ptr<nccl::Communicators> comms) : comms_(std::move(comms)) {}
  int ranks() const override { return comms_->ranks(); }
  absl::Status Fill() override { return ToStatus(comms_->Fill()); }
  absl::StatusOr<double> Time(int iters) override {
    double s = 0;
    if (auto st = ToStatus(comms_->Time(iters, &s)); !st.ok()) return st;
    return s;
  }
  absl::StatusOr<std::string> Check(int corrupt_rank) override {
    std::string wrong;
    if (auto st = ToStatus(comms_->Check(corrupt_rank, &wrong)); !st.ok()) return st;
    return wrong;
  }

 private:
  std::shared_ptr<nccl::Communicators> comms_;
};

}  // namespace

absl::StatusOr<std::shared_ptr<nccl::Communicators>> WorldCommunicators(World& world) {
  if (world.nccl) return std::static_pointer_cast<nccl::Communicators>(world.nccl);
  nccl::Error error;
  const int visible = nccl::VisibleDevices(&error);
  if (visible == 0) return ToStatus(error);
  std::unique_ptr<nccl::Communicators> made;
  if (world.size() == 1) {
    const int gpus = world.options().gpus > 0 ? world.options().gpus : visible;
    if (gpus > visible) {
      return absl::InvalidArgumentError(
          absl::StrCat("--gpus ", gpus, " but only ", visible, " CUDA devices are visible"));
    }
    if (auto s = ToStatus(nccl::Communicators::CreateLocal(gpus, &made)); !s.ok()) return s;
  } else {
    std::vector<char> id;
    if (world.rank() == 0) {
      if (auto s = ToStatus(nccl::NewUniqueId(&id)); !s.ok()) return s;
    }
    auto shared = world.ShareFromRoot("nccl_unique_id", std::move(id));
    if (!shared.ok()) return shared.status();
    const int device = WorldDevice(world, visible);
    if (device >= visible) {
      return absl::InvalidArgumentError(absl::StrCat("rank ", world.rank(), ": device ", device,
                                                     " but only ", visible, " are visible"));
    }
    if (auto s = ToStatus(nccl::Communicators::CreateRank(world.rank(), world.size(), device,
                                                          *shared, &made));
        !s.ok()) {
      return s;
    }
  }
  std::shared_ptr<nccl::Communicators> comms(std::move(made));
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
  if (!comms.ok()) return comms.status();
  *layout = LayoutOf(op, bytes, (*comms)->ranks(), dtype);
  if (auto s = ToStatus((*comms)->Prepare(op, dtype, bytes, in_place)); !s.ok()) return s;
  return std::unique_ptr<Backend>(new NcclBackend(*comms));
}

}  // namespace perfgate::suites::collectives
