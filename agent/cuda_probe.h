// The device probe through the CUDA runtime. Kept free of the C++20 domain
// headers because nvcc compiles its implementation as C++17.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace perfgate::agent {

/// One CUDA device as the runtime describes it.
struct GpuInfo {
  int index = 0;
  std::string name;
  std::string uuid;
  std::string pci_bus_id;     // as the runtime prints it, "0000:1B:00.0"; ProbeMachine canonicalises
  uint64_t total_memory = 0;  // bytes
  int sm_count = 0;
  int cc_major = 0, cc_minor = 0;
  int l2_bytes = 0;
  int max_sm_clock_mhz = 0;   // peak clocks as the runtime states them
  int max_mem_clock_mhz = 0;
  bool ecc_enabled = false;
  std::string compute_mode;   // "default", "exclusive_process", "prohibited"
};

/// What the CUDA runtime said, or why it said nothing.
struct CudaProbe {
  bool available = false;
  std::string note;  // why no GPU is visible ("built without CUDA", the runtime's error)
  int driver_version = 0;   // e.g. 12040 for 12.4
  int runtime_version = 0;
  std::vector<GpuInfo> devices;
};

/// Asks the CUDA runtime for devices; never fails, only reports.
CudaProbe ProbeCuda();

}  // namespace perfgate::agent
