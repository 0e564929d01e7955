#include "suites/builtin.h"

#include "suites/collectives/collectives.h"
#include "suites/kernels/kernels.h"

namespace perfgate::suites {

const Registry& BuiltinRegistry() {
  static const Registry registry = [] {
    Registry r;
    kernels::RegisterHost(r);
    collectives::Register(r);
    kernels::RegisterGpu(r);
    return r;
  }();
  return registry;
}

}  // namespace perfgate::suites
