// When a run is invalid for gating (agent/README.md, "The probe"): the device facts read
// at the start and at the end of a run, and the throttled samples of each
// case, turned into reasons. A run with reasons is stored and shown, flagged;
// the rules are pure so that each is tested on made-up readings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace perfgate {

/// The facts of one device that decide whether a run may gate, read at one
/// moment. Unset: the device or NVML could not tell, and the rule is silent.
struct DeviceHealth {
  int index = 0;           // CUDA device index
  std::string pci_bus_id;  // "0000:1b:00.0" (CanonicalPciBusId)
  std::optional<uint64_t> ecc_volatile_corrected, ecc_volatile_uncorrected;
  std::optional<uint64_t> ecc_aggregate_corrected, ecc_aggregate_uncorrected;
  std::optional<uint32_t> remapped_rows_corrected, remapped_rows_uncorrected;
  std::optional<uint32_t> pcie_gen, pcie_width;          // current link
  std::optional<uint32_t> pcie_gen_max, pcie_width_max;  // what device and slot allow
  std::optional<bool> mig_enabled;
  std::optional<std::vector<uint32_t>> other_process_pids;  // compute processes not the agent's
  // Whether the agent's own pid was among NVML's processes. Inside a PID
  // namespace (a container) NVML lists host pids and it never is: the
  // agent's own context then hides among `other_process_pids`.
  bool self_listed = false;
};

/// Samples of one case, and how many of them were throttled.
struct CaseThrottleCount {
  std::string benchmark;  // BenchmarkId::Key()
  uint32_t samples = 0;   // throttled ones included
  uint32_t throttled = 0;
};

/// "Most samples": a case with more than this fraction of its samples
/// throttled makes the run invalid. Judged per case, because a run's total
/// hides a short case that was throttled throughout; a run whose total is
/// over half always has such a case.
inline constexpr double kMostSamplesFraction = 0.5;

/// Every reason the run is invalid for gating, empty when it is valid:
/// a case throttled on most samples; an ECC or row-remap counter that moved
/// between `start` and `end`; a PCIe link below its maximum (width at either
/// reading; generation at both, since an idle GPU lowers its link generation
/// to save power); MIG mode that changed; other compute processes on the GPU
/// at either reading; a device present at the start and gone at the end.
/// Devices are matched by PCI bus id. Messages name the device and numbers.
std::vector<std::string> InvalidForGatingReasons(const std::vector<DeviceHealth>& start,
                                                 const std::vector<DeviceHealth>& end,
                                                 const std::vector<CaseThrottleCount>& cases);

}  // namespace perfgate
