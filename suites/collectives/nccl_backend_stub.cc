// Built when PERFGATE_WITH_NCCL is off: the nccl backend skips with the reason.
#include "suites/collectives/nccl_backend.h"

namespace perfgate::suites::collectives::nccl {
namespace {

Error Unavailable() {
  return Error{"this build has no NCCL backend (configure with PERFGATE_WITH_NCCL=ON on a "
               "machine with the CUDA toolkit and NCCL)",
               true};
}

}  // namespace

struct Communicators::Impl {};

int VisibleDevices(Error* error) {
  *error = Unavailable();
  return 0;
}

Error NewUniqueId(std::vector<char>*) { return Unavailable(); }

Error Communicators::CreateLocal(int, std::unique_ptr<Communicators>*) { return Unavailable(); }

Error Communicators::CreateRank(int, int, int, const std::vector<char>&,
                                std::unique_ptr<Communicators>*) {
  return Unavailable();
}

Communicators::Communicators(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicators::~Communicators() = default;
int Communicators::ranks() const { return 0; }
Error Communicators::Prepare(Op, DType, size_t, bool) { return Unavailable(); }
Error Communicators::Fill() { return Unavailable(); }
Error Communicators::Time(int, double*) { return Unavailable(); }
Error Communicators::Check(int, std::string*) { return Unavailable(); }
Error Communicators::AllReduceFloatSum(float*, size_t, void*) { return Unavailable(); }

}  // namespace perfgate::suites::collectives::nccl
