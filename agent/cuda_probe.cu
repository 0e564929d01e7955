// The device probe through the CUDA runtime. Linked statically against
// cudart, so a binary built here starts on machines without a CUDA install
// and reports "no driver" instead of failing to load.
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "agent/cuda_probe.h"

namespace perfgate::agent {
namespace {

std::string Uuid(const cudaUUID_t& u) {
  char buf[64];
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return buf;
}

std::string Error(const char* call, cudaError_t e) {
  return std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

}  // namespace

CudaProbe ProbeCuda() {
  CudaProbe p;
  cudaError_t e = cudaRuntimeGetVersion(&p.runtime_version);
  if (e != cudaSuccess) {
    p.note = Error("cudaRuntimeGetVersion", e);
    return p;
  }
  e = cudaDriverGetVersion(&p.driver_version);
  if (e != cudaSuccess || p.driver_version == 0) {
    p.note = e != cudaSuccess ? Error("cudaDriverGetVersion", e) : "no CUDA driver installed";
    return p;
  }
  int count = 0;
  e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    p.note = Error("cudaGetDeviceCount", e);
    return p;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    e = cudaGetDeviceProperties(&prop, i);
    if (e != cudaSuccess) {
      p.note = Error("cudaGetDeviceProperties", e);
      return p;
    }
    GpuInfo g;
    g.index = i;
    g.name = prop.name;
    g.uuid = Uuid(prop.uuid);
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, i) == cudaSuccess) g.pci_bus_id = bus;
    g.total_memory = prop.totalGlobalMem;
    g.sm_count = prop.multiProcessorCount;
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.l2_bytes = prop.l2CacheSize;
    p.devices.push_back(g);
  }
  p.available = count > 0;
  if (count == 0) p.note = "the CUDA runtime sees no device";
  return p;
}

}  // namespace perfgate::agent
