// Built when PERFGATE_WITH_NCCL is off: the nccl backend skips with the reason.
#include "suites/collectives/nccl_backend.h"

namespace perfgate::suites::collectives::nccl {
namespace {

absl::Status Unavailable() {
  return absl::UnavailableError(
      "this build has no NCCL backend (configure with PERFGATE_WITH_NCCL=ON on a "
      "machine with the CUDA toolkit and NCCL)");
}

}  // namespace

struct Communicators::Impl {};

absl::Status Available() { return Unavailable(); }

absl::StatusOr<std::vector<char>> NewUniqueId() { return Unavailable(); }

absl::StatusOr<std::unique_ptr<Communicators>> Communicators::CreateLocal(int) { return Unavailable(); }

absl::StatusOr<std::unique_ptr<Communicators>> Communicators::CreateRank(int, int, int,
                                                                         const std::vector<char>&) {
  return Unavailable();
}

Communicators::Communicators(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicators::~Communicators() = default;
int Communicators::ranks() const { return 0; }
absl::Status Communicators::Prepare(Op, DType, size_t, bool) { return Unavailable(); }
absl::Status Communicators::Fill() { return Unavailable(); }
absl::StatusOr<double> Communicators::Time(int) { return Unavailable(); }
absl::StatusOr<std::string> Communicators::Check(int) { return Unavailable(); }
absl::Status Communicators::AllReduceFloatSum(float*, size_t, void*) { return Unavailable(); }

}  // namespace perfgate::suites::collectives::nccl
