// What the agent learns about the machine it measures on: the host (CPU,
// memory, kernel, compiler) and, where one is visible, the GPU through the
// CUDA runtime. The result is an SKU key and an Environment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agent/cuda_probe.h"
#include "common/model.h"

namespace perfgate::agent {

/// Fields parsed from /proc/cpuinfo.
struct CpuInfo {
  std::string vendor_id;   // "AuthenticAMD", "GenuineIntel", or the ARM implementer
  std::string model_name;  // "AMD EPYC 7B13 64-Core Processor"
  unsigned logical_cpus = 0;
};

/// Parses the text of /proc/cpuinfo (x86 and ARM layouts).
CpuInfo ParseCpuInfo(const std::string& text);
/// MemTotal of /proc/meminfo in bytes; 0 when absent.
uint64_t ParseMemTotal(const std::string& text);
/// PRETTY_NAME of /etc/os-release, unquoted; empty when absent.
std::string ParseOsPrettyName(const std::string& text);

/// Everything probed, and the environment built from it.
struct ProbeResult {
  CpuInfo cpu;
  uint64_t memory_bytes = 0;
  std::string hostname;
  CudaProbe cuda;
  Environment environment;  // sku + fields
};

/// Probes this machine.
ProbeResult ProbeMachine();

/// This machine's hostname, without probing anything else.
std::string Hostname();

/// Builds the SKU key and environment fields from probed facts (pure; tested
/// on recorded descriptions).
Environment BuildEnvironment(const CpuInfo& cpu, uint64_t memory_bytes, const std::string& kernel,
                             const std::string& os, const CudaProbe& cuda);

}  // namespace perfgate::agent
