// Device probe of a build without CUDA: says so, finds nothing.
#include "agent/cuda_probe.h"

namespace perfgate::agent {

CudaProbe ProbeCuda() {
  CudaProbe p;
  p.note = "perfgate was built without CUDA (PERFGATE_WITH_CUDA=OFF)";
  return p;
}

}  // namespace perfgate::agent
