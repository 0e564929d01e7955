#include "suites/builtin.h"

#include "suites/collectives/collectives.h"
#include "suites/inference/inference.h"
#include "suites/kernels/kernels.h"
#include "suites/training/training.h"

namespace perfgate::suites {

const Registry& BuiltinRegistry() {
  static const Registry registry = [] {
    Registry r;
    kernels::RegisterHost(r);
    collectives::Register(r);
    kernels::RegisterGpu(r);
    training::Register(r);
    inference::Register(r);
    return r;
  }();
  return registry;
}

}  // namespace perfgate::suites
