// The device probe through the CUDA runtime. Linked statically against
// cudart, so a binary built here starts on machines without a CUDA install
// and reports "no driver" instead of failing to load. A failed call's note
// names file, line, call and the runtime's words (suites/cuda/check.h).
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "agent/cuda_probe.h"
#include "suites/cuda/check.h"
#include "suites/cuda/visible_devices.h"

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

const char* ComputeMode(int mode) {
  switch (mode) {
    case cudaComputeModeDefault: return "default";
    case cudaComputeModeProhibited: return "prohibited";
    case cudaComputeModeExclusiveProcess: return "exclusive_process";
    default: return "unknown";
  }
}

// Fills `p` from the runtime; the first failed call ends it (check.h).
absl::Status Probe(CudaProbe& p) {
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&p.runtime_version));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&p.driver_version));
  if (p.driver_version == 0) return absl::UnavailableError(cuda::kNoCudaDriver);
  int count = 0;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetDeviceCount(&count));
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, i));
    GpuInfo g;
    g.index = i;
    g.name = prop.name;
    g.uuid = Uuid(prop.uuid);
    char bus[32] = {};
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetPCIBusId(bus, sizeof bus, i));
    g.pci_bus_id = bus;
    g.total_memory = prop.totalGlobalMem;
    g.sm_count = prop.multiProcessorCount;
    g.cc_major = prop.major;
    g.cc_minor = prop.minor;
    g.l2_bytes = prop.l2CacheSize;
    int khz = 0, ecc = 0, mode = 0;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, i));
    g.max_sm_clock_mhz = khz / 1000;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, i));
    g.max_mem_clock_mhz = khz / 1000;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&ecc, cudaDevAttrEccEnabled, i));
    g.ecc_enabled = ecc != 0;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, i));
    g.compute_mode = ComputeMode(mode);
    p.devices.push_back(g);
  }
  p.available = count > 0;
  if (count == 0) p.note = "the CUDA runtime sees no device";
  return absl::OkStatus();
}

}  // namespace

CudaProbe ProbeCuda() {
  CudaProbe p;
  if (const absl::Status s = Probe(p); !s.ok()) {
    p.note = std::string(s.message());
    p.devices.clear();
  }
  return p;
}

}  // namespace perfgate::agent
