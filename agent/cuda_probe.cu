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

std::string Error(const char* call, cudaError_t e, const char* file, int line) {
  return std::string(call) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ") at " +
         file + ":" + std::to_string(line);
}

const char* ComputeMode(int mode) {
  switch (mode) {
    case cudaComputeModeDefault: return "default";
    case cudaComputeModeProhibited: return "prohibited";
    case cudaComputeModeExclusiveProcess: return "exclusive_process";
    default: return "unknown";
  }
}

}  // namespace

// A failed runtime call ends the probe with the call, the error, file and line.
#define PERFGATE_CUDA_PROBE(call, probe)                          \
  do {                                                            \
    const cudaError_t perfgate_e = (call);                        \
    if (perfgate_e != cudaSuccess) {                              \
      (probe).note = Error(#call, perfgate_e, __FILE__, __LINE__); \
      (probe).devices.clear();                                    \
      return probe;                                               \
    }                                                             \
  } while (0)

CudaProbe ProbeCuda() {
  CudaProbe p;
  PERFGATE_CUDA_PROBE(cudaRuntimeGetVersion(&p.runtime_version), p);
  PERFGATE_CUDA_PROBE(cudaDriverGetVersion(&p.driver_version), p);
  if (p.driver_version == 0) {
    p.note = "no CUDA driver installed";
    return p;
  }
  int count = 0;
  PERFGATE_CUDA_PROBE(cudaGetDeviceCount(&count), p);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    PERFGATE_CUDA_PROBE(cudaGetDeviceProperties(&prop, i), p);
    GpuInfo g;
    g.index = i;
    g.name = prop.name;
    g.uuid = Uuid(prop.uuid);
    char bus[32] = {};
    PERFGATE_CUDA_PROBE(cudaDeviceGetPCIBusId(bus, sizeof bus, i), p);
    g.pci_bus_id = bus;
    g.total_memory = prop.totalGlobalMem;
    g.sm_count = prop.multiProcessorCount;
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.l2_bytes = prop.l2CacheSize;
    int khz = 0, ecc = 0, mode = 0;
    PERFGATE_CUDA_PROBE(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, i), p);
    g.max_sm_clock_mhz = khz / 1000;
    PERFGATE_CUDA_PROBE(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, i), p);
    g.max_mem_clock_mhz = khz / 1000;
    PERFGATE_CUDA_PROBE(cudaDeviceGetAttribute(&ecc, cudaDevAttrEccEnabled, i), p);
    g.ecc_enabled = ecc != 0;
    PERFGATE_CUDA_PROBE(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, i), p);
    g.compute_mode = ComputeMode(mode);
    p.devices.push_back(g);
  }
  p.available = count > 0;
  if (count == 0) p.note = "the CUDA runtime sees no device";
  return p;
}

}  // namespace perfgate::agent
