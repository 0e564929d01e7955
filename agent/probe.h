// What the agent learns about the machine it measures on (agent/README.md, "The probe"):
// the host (CPU, memory, kernel, compiler), the GPUs through the CUDA runtime
// and, mapped to them by PCI bus id, through NVML; the versions of the CUDA
// libraries, loaded with dlopen so the agent depends on none of them; the
// container image and the Slurm job. The result is an SKU key, an
// Environment (what must match for numbers to compare) and run details
// (what changes from run to run); agent/README.md lists which is which.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/cuda_probe.h"
#include "common/run_types.h"
#include "measure/nvml.h"
#include "measure/validity.h"

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

/// Versions of what runs beside the agent and moves numbers. A library that
/// cannot be loaded is "absent"; no image digest is empty.
struct SoftwareVersions {
  std::string nvidia_driver;  // from NVML; empty without it
  std::string cublas = "absent";
  std::string cudnn = "absent";
  std::string nccl = "absent";
  std::string image_digest;   // RecordedImageDigest(): the digest, "unpinned", or "" on a host
};

/// "13.1.0" from cublasLtGetVersion()'s major*10000 + minor*100 + patch.
std::string CublasVersionText(size_t version);
/// cudnnGetVersion(): major*10000 + minor*100 + patch from cuDNN 9 on,
/// major*1000 + minor*100 + patch before.
std::string CudnnVersionText(size_t version);
/// ncclGetVersion(): as cuDNN, the wider form from NCCL 2.9 on.
std::string NcclVersionText(int version);
/// Loads cuBLASLt, cuDNN and NCCL with dlopen and asks each its version.
SoftwareVersions ProbeLibraries();

/// Run details from Slurm's variables (SLURM_JOB_ID, SLURM_ARRAY_JOB_ID,
/// SLURM_ARRAY_TASK_ID, SLURM_PROCID, SLURM_NODEID) read through `getenv`;
/// keys "slurm_job_id", ..., present only when set.
std::map<std::string, std::string> SlurmDetails(
    const std::function<const char*(const char*)>& getenv);

/// Run details from PERFGATE_GPU_LIBRARIES, read through `getenv`: where
/// the bundle's bin/perfgate-agent found each library the agent opens at run
/// time (lines "NAME PATH (from ORIGIN)" or "NAME not found (...)", joined by
/// ';'); key "library.NAME", the rest of its line the value. Empty when unset.
std::map<std::string, std::string> GpuLibraryDetails(
    const std::function<const char*(const char*)>& getenv);

/// Everything probed, and the environment and details built from it.
struct ProbeResult {
  CpuInfo cpu;
  uint64_t memory_bytes = 0;
  std::string hostname;
  CudaProbe cuda;
  // NVML's facts per CUDA device (same order as cuda.devices); empty facts
  // where NVML is unavailable or could not map the device.
  std::vector<NvmlDeviceFacts> gpu_facts;
  std::vector<std::optional<NvmlDevice>> nvml_devices;  // handles, same order
  std::string nvml_status;  // "ok", or "unavailable: <why>"
  std::shared_ptr<Nvml> nvml;  // loaded library, null when unavailable
  SoftwareVersions software;
  Environment environment;  // sku + fields
  std::map<std::string, std::string> details;
};

/// Probes this machine.
ProbeResult ProbeMachine();

/// This machine's hostname, without probing anything else.
std::string Hostname();

/// Builds the SKU key and environment fields from probed facts (pure; tested
/// on recorded descriptions). `gpu_facts` parallels cuda.devices or is empty;
/// a fact the devices disagree on lists each device's value, comma-separated.
Environment BuildEnvironment(const CpuInfo& cpu, uint64_t memory_bytes, const std::string& kernel,
                             const std::string& os, const CudaProbe& cuda,
                             const std::vector<NvmlDeviceFacts>& gpu_facts = {},
                             const SoftwareVersions& software = {});

/// The run details: per device "gpu<i>.<fact>" (UUID, serial, temperature,
/// current clocks, P-state, error counters, current PCIe link, processes,
/// clocks-event reasons), "nvml" (its status), and `extra` (Slurm ids) (pure).
std::map<std::string, std::string> BuildDetails(const CudaProbe& cuda,
                                                const std::vector<NvmlDeviceFacts>& gpu_facts,
                                                const std::string& nvml_status,
                                                const std::map<std::string, std::string>& extra);

/// The facts that decide validity, per CUDA device; processes whose pid is
/// `self_pid` (the agent) are not "other" (pure).
std::vector<DeviceHealth> HealthOf(const CudaProbe& cuda,
                                   const std::vector<NvmlDeviceFacts>& gpu_facts,
                                   uint32_t self_pid);

/// Reads the facts that decide validity again, now (the end of a run), from
/// the NVML devices `probe` mapped.
std::vector<DeviceHealth> ProbeHealth(const ProbeResult& probe);

/// Per-case sample and throttled counts of finished cases.
std::vector<CaseThrottleCount> ThrottleCounts(const std::vector<CaseResult>& cases);

}  // namespace perfgate::agent
