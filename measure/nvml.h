// NVML, loaded at run time with dlopen("libnvidia-ml.so.1") so that nothing
// perfgate builds needs the driver to link or start (agent/README.md, "The probe"). Only
// the versioned entry points are called; each fact is optional, because a
// device that answers NOT_SUPPORTED (no ECC on an L4, no remapping before
// Ampere) has a gap there, not an error.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "measure/engine.h"

namespace perfgate {

/// An NVML device handle; valid while the Nvml that returned it lives.
struct NvmlDevice {
  void* handle = nullptr;
};

/// A process holding a compute context on a device.
struct NvmlProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_bytes;  // unset where NVML cannot tell (MIG, containers)
};

/// Everything §3 asks NVML about one device. Unset: NVML does not support it.
struct NvmlDeviceFacts {
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> serial;
  std::optional<std::string> pci_bus_id;     // "00000000:1B:00.0", NVML's form
  std::optional<uint32_t> pci_device_id;     // device id << 16 | vendor id (0x233010de: H100 SXM5)
  std::optional<uint64_t> memory_bytes;
  // Default clocks: the default application clocks where the device has them,
  // else its maximum clocks; default_clock_source says which ("default
  // applications clock" or "max clock").
  std::optional<uint32_t> default_sm_clock_mhz;
  std::optional<uint32_t> default_mem_clock_mhz;
  std::string default_clock_source;
  std::optional<uint32_t> sm_clock_mhz;   // current
  std::optional<uint32_t> mem_clock_mhz;  // current
  std::optional<uint32_t> power_limit_mw;  // the power management limit in force
  std::optional<uint32_t> power_usage_mw;  // the board's draw now
  std::optional<uint64_t> total_energy_mj;  // energy since the driver loaded (Volta and later)
  std::optional<uint32_t> temperature_c;
  std::optional<uint32_t> pstate;          // 0 (fastest) .. 15
  std::optional<bool> ecc_enabled;         // current mode
  std::optional<uint64_t> ecc_volatile_corrected;
  std::optional<uint64_t> ecc_volatile_uncorrected;
  std::optional<uint64_t> ecc_aggregate_corrected;
  std::optional<uint64_t> ecc_aggregate_uncorrected;
  std::optional<uint32_t> remapped_rows_corrected;
  std::optional<uint32_t> remapped_rows_uncorrected;
  std::optional<bool> remap_pending;
  std::optional<bool> remap_failed;
  std::optional<uint32_t> pcie_gen, pcie_width;          // current link
  std::optional<uint32_t> pcie_gen_max, pcie_width_max;  // what device and slot allow
  std::optional<bool> mig_enabled;                       // current MIG mode
  std::optional<bool> persistence_enabled;
  std::optional<std::string> compute_mode;  // "default", "exclusive_process", "prohibited"
  std::optional<std::vector<NvmlProcess>> compute_processes;
  std::optional<uint64_t> clocks_event_reasons;  // current clocks-event (throttle) reasons
};

/// The loaded library, initialised; shut down and unloaded on destruction.
class Nvml {
 public:
  /// Loads libnvidia-ml.so.1 and calls nvmlInit_v2. NOT_FOUND when the
  /// library is missing, UNAVAILABLE when it loads but cannot initialise (no
  /// driver loaded, no device); the message says the CUDA runtime remains.
  static absl::StatusOr<std::unique_ptr<Nvml>> Load();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  /// The kernel driver's version, e.g. "570.124.06".
  absl::StatusOr<std::string> DriverVersion() const;
  /// The device at a PCI bus id in any spelling CanonicalPciBusId reads
  /// (CUDA's "0000:1B:00.0", NVML's "00000000:1B:00.0", lower or upper
  /// case): how a CUDA device is mapped to NVML.
  absl::StatusOr<NvmlDevice> DeviceByPciBusId(const std::string& bus_id) const;

  /// Every fact NVML gives about `device`; never fails, leaves gaps.
  NvmlDeviceFacts Describe(NvmlDevice device) const;
  /// The current SM clock in MHz; unset when NVML cannot read it.
  std::optional<uint32_t> SmClockMhz(NvmlDevice device) const;
  /// Current clocks-event reasons (nvmlDeviceGetCurrentClocksEventReasons, or
  /// the older ...ThrottleReasons on drivers before 535); unset when unreadable.
  std::optional<uint64_t> ClocksEventReasons(NvmlDevice device) const;
  /// The total energy counter (nvmlDeviceGetTotalEnergyConsumption, mJ since
  /// the driver loaded; Volta and later, updated every 20-100 ms). UNIMPLEMENTED
  /// when the driver lacks the entry point, UNAVAILABLE with NVML's reason
  /// (NOT_SUPPORTED on older devices) otherwise.
  absl::StatusOr<uint64_t> TotalEnergyMj(NvmlDevice device) const;

  struct Api;  // the resolved entry points

 private:
  Nvml(void* library, std::unique_ptr<Api> api);
  void* library_;
  std::unique_ptr<Api> api_;
};

/// A PCI address as Linux's sysfs spells it, "0000:1b:00.0" (lower case, four
/// domain digits or more), from CUDA's "0000:1B:00.0", NVML's
/// "00000000:1B:00.0" or a domain-less "1b:00.0"; InvalidArgument otherwise.
absl::StatusOr<std::string> CanonicalPciBusId(const std::string& bus_id);
/// The same address as nvmlPciInfo_t::busId spells it, "00000000:1B:00.0".
absl::StatusOr<std::string> NvmlPciBusId(const std::string& bus_id);

/// The engine's reading from NVML's answers: invalid without a clock. While
/// the GPU-idle reason (0x1) is set the clock is left out (0), because an
/// idle GPU lowers its clock on purpose and that is no throttling; the
/// reasons are kept either way.
ThrottleReading ThrottleReadingOf(std::optional<uint32_t> sm_clock_mhz,
                                  std::optional<uint64_t> clocks_event_reasons);

/// A ThrottleSource reading one device's SM clock and clocks-event reasons
/// through NVML, for the engine's sampling loop. Read() may be called from
/// any thread: it changes no state, and NVML's calls are thread-safe.
class NvmlThrottleSource : public ThrottleSource {
 public:
  /// `nvml` must outlive the source; `default_sm_clock_mhz` is the clock the
  /// device runs at unhindered (NvmlDeviceFacts::default_sm_clock_mhz).
  NvmlThrottleSource(const Nvml& nvml, NvmlDevice device, double default_sm_clock_mhz);
  /// The current SM clock and reasons, as ThrottleReadingOf makes them.
  ThrottleReading Read() override;
  /// The clock given at construction.
  double DefaultSmClockMhz() const override { return default_sm_clock_mhz_; }
  /// Nvml::TotalEnergyMj in joules.
  absl::StatusOr<double> EnergyJoules() override;

 private:
  const Nvml& nvml_;
  NvmlDevice device_;
  double default_sm_clock_mhz_;
};

}  // namespace perfgate
