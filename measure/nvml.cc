#include "measure/nvml.h"

#include <dlfcn.h>

#include <cstddef>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace perfgate {
namespace {

// The few NVML declarations perfgate uses, laid out as NVML's public nvml.h
// declares them (no NVML header ships with the CUDA toolkit image here).
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
constexpr int NVML_CLOCK_GRAPHICS = 0;
constexpr int NVML_CLOCK_SM = 1;
constexpr int NVML_CLOCK_MEM = 2;
constexpr int NVML_TEMPERATURE_GPU = 0;
constexpr int NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;
constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
constexpr int NVML_VOLATILE_ECC = 0;
constexpr int NVML_AGGREGATE_ECC = 1;
constexpr unsigned kNameBufferSize = 96;     // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidBufferSize = 96;     // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kSerialBufferSize = 30;   // NVML_DEVICE_SERIAL_BUFFER_SIZE
constexpr unsigned kDriverBufferSize = 80;   // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};
static_assert(offsetof(nvmlPciInfo_t, domain) == 16 && offsetof(nvmlPciInfo_t, pciDeviceId) == 28 &&
                  offsetof(nvmlPciInfo_t, busId) == 36 && sizeof(nvmlPciInfo_t) == 68,
              "nvmlPciInfo_t must match nvml.h");

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t (v1) must match nvml.h");

// nvmlProcessInfo_t of nvml.h since CUDA 11 (alias nvmlProcessInfo_v2_t), the
// element type of nvmlDeviceGetComputeRunningProcesses_v3.
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};
static_assert(offsetof(nvmlProcessInfo_t, usedGpuMemory) == 8 &&
                  offsetof(nvmlProcessInfo_t, computeInstanceId) == 20 &&
                  sizeof(nvmlProcessInfo_t) == 24,
              "nvmlProcessInfo_t must match nvml.h");

// nvmlClocksEventReasonGpuIdle: nothing runs, the clock is low by design.
constexpr uint64_t kReasonGpuIdle = 0x1;

// The parts of a PCI address.
struct PciAddress {
  uint32_t domain = 0, bus = 0, device = 0, function = 0;
};

// Reads 1..max_digits hex digits, either case.
bool Hex(const std::string& s, size_t max_digits, uint32_t& out) {
  if (s.empty() || s.size() > max_digits) return false;
  uint32_t v = 0;
  for (char c : s) {
    const int d = absl::ascii_isdigit(static_cast<unsigned char>(c)) ? c - '0'
                  : (c >= 'a' && c <= 'f')                          ? c - 'a' + 10
                  : (c >= 'A' && c <= 'F')                          ? c - 'A' + 10
                                                                    : -1;
    if (d < 0) return false;
    v = v * 16 + static_cast<uint32_t>(d);
  }
  out = v;
  return true;
}

// [domain:]bus:device.function, hex, any case, any domain width up to NVML's eight.
std::optional<PciAddress> ParsePciAddress(const std::string& s) {
  PciAddress a;
  const size_t dot = s.rfind('.');
  if (dot == std::string::npos || !Hex(s.substr(dot + 1), 1, a.function) || a.function > 7) {
    return std::nullopt;
  }
  std::string head = s.substr(0, dot);
  const size_t last = head.rfind(':');
  if (last == std::string::npos || !Hex(head.substr(last + 1), 2, a.device) || a.device > 31) {
    return std::nullopt;
  }
  head.resize(last);
  const size_t first = head.rfind(':');
  if (!Hex(first == std::string::npos ? head : head.substr(first + 1), 2, a.bus)) return std::nullopt;
  if (first != std::string::npos && !Hex(head.substr(0, first), 8, a.domain)) return std::nullopt;
  return a;
}

// NVML_VALUE_NOT_AVAILABLE as an unsigned long long: usedGpuMemory unknown.
constexpr unsigned long long kValueNotAvailable = ~0ull;

template <typename F>
F Symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*serial)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*pci_info)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*default_app_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*pstate)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int*, int*) = nullptr;
  nvmlReturn_t (*ecc_errors)(nvmlDevice_t, int, int, unsigned long long*) = nullptr;
  nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*pcie_width_max)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*persistence)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*compute_mode)(nvmlDevice_t, int*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*event_reasons)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;         // mW
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;  // mJ

  std::string Error(const char* call, nvmlReturn_t r) const {
    return absl::StrCat(call, ": ", error_string ? error_string(r) : "error", " (NVML ", r, ")");
  }
};

absl::StatusOr<std::unique_ptr<Nvml>> Nvml::Load() {
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return absl::NotFoundError(absl::StrCat("NVML not found (libnvidia-ml.so.1): ",
                                            std::string(why ? why : "dlopen failed"),
                                            "; GPU facts come from the CUDA runtime only"));
  }
  auto api = std::make_unique<Api>();
  api->init = Symbol<decltype(api->init)>(library, "nvmlInit_v2");
  api->shutdown = Symbol<decltype(api->shutdown)>(library, "nvmlShutdown");
  api->error_string = Symbol<decltype(api->error_string)>(library, "nvmlErrorString");
  if (api->init == nullptr || api->shutdown == nullptr) {
    dlclose(library);
    return absl::NotFoundError(
        "NVML in libnvidia-ml.so.1 lacks nvmlInit_v2 (a driver older than R331?); GPU facts come "
        "from the CUDA runtime only");
  }
  if (const nvmlReturn_t r = api->init(); r != NVML_SUCCESS) {
    const std::string why = api->Error("nvmlInit_v2", r);
    dlclose(library);
    return absl::UnavailableError(
        absl::StrCat("NVML cannot initialise: ", why, "; GPU facts come from the CUDA runtime only"));
  }
  // Entry points a driver may lack stay null; the facts behind them stay unset.
  auto sym = [&](auto& f, const char* name) { f = Symbol<std::decay_t<decltype(f)>>(library, name); };
  sym(api->driver_version, "nvmlSystemGetDriverVersion");
  sym(api->by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
  sym(api->name, "nvmlDeviceGetName");
  sym(api->uuid, "nvmlDeviceGetUUID");
  sym(api->serial, "nvmlDeviceGetSerial");
  sym(api->pci_info, "nvmlDeviceGetPciInfo_v3");
  sym(api->memory, "nvmlDeviceGetMemoryInfo");
  sym(api->clock, "nvmlDeviceGetClockInfo");
  sym(api->max_clock, "nvmlDeviceGetMaxClockInfo");
  sym(api->default_app_clock, "nvmlDeviceGetDefaultApplicationsClock");
  sym(api->power_limit, "nvmlDeviceGetPowerManagementLimit");
  sym(api->temperature, "nvmlDeviceGetTemperature");
  sym(api->pstate, "nvmlDeviceGetPerformanceState");
  sym(api->ecc_mode, "nvmlDeviceGetEccMode");
  sym(api->ecc_errors, "nvmlDeviceGetTotalEccErrors");
  sym(api->remapped_rows, "nvmlDeviceGetRemappedRows");
  sym(api->pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
  sym(api->pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
  sym(api->pcie_gen_max, "nvmlDeviceGetMaxPcieLinkGeneration");
  sym(api->pcie_width_max, "nvmlDeviceGetMaxPcieLinkWidth");
  sym(api->mig_mode, "nvmlDeviceGetMigMode");
  sym(api->persistence, "nvmlDeviceGetPersistenceMode");
  sym(api->compute_mode, "nvmlDeviceGetComputeMode");
  sym(api->processes, "nvmlDeviceGetComputeRunningProcesses_v3");
  sym(api->event_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  sym(api->power_usage, "nvmlDeviceGetPowerUsage");
  sym(api->total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  if (api->event_reasons == nullptr) {
    sym(api->event_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  return std::unique_ptr<Nvml>(new Nvml(library, std::move(api)));
}

Nvml::Nvml(void* library, std::unique_ptr<Api> api) : library_(library), api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(library_);
}

absl::StatusOr<std::string> Nvml::DriverVersion() const {
  if (api_->driver_version == nullptr) {
    return absl::UnimplementedError("NVML lacks nvmlSystemGetDriverVersion");
  }
  char buf[kDriverBufferSize] = {};
  if (const nvmlReturn_t r = api_->driver_version(buf, sizeof buf); r != NVML_SUCCESS) {
    return absl::InternalError(api_->Error("nvmlSystemGetDriverVersion", r));
  }
  return std::string(buf);
}

absl::StatusOr<std::string> CanonicalPciBusId(const std::string& bus_id) {
  const std::optional<PciAddress> a = ParsePciAddress(bus_id);
  if (!a) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", bus_id, "' is not a PCI bus id: expected [domain:]bus:device.function in hex"));
  }
  return absl::StrFormat("%04x:%02x:%02x.%x", a->domain, a->bus, a->device, a->function);
}

absl::StatusOr<std::string> NvmlPciBusId(const std::string& bus_id) {
  const std::optional<PciAddress> a = ParsePciAddress(bus_id);
  if (!a) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", bus_id, "' is not a PCI bus id: expected [domain:]bus:device.function in hex"));
  }
  return absl::StrFormat("%08X:%02X:%02X.%X", a->domain, a->bus, a->device, a->function);
}

absl::StatusOr<NvmlDevice> Nvml::DeviceByPciBusId(const std::string& bus_id) const {
  if (api_->by_pci == nullptr) {
    return absl::UnimplementedError("NVML lacks nvmlDeviceGetHandleByPciBusId_v2");
  }
  NvmlDevice d;
  // NVML's own spelling first (what nvmlPciInfo_t::busId holds); the text as
  // given where it is no address perfgate reads, for NVML to judge.
  const absl::StatusOr<std::string> own = NvmlPciBusId(bus_id);
  nvmlReturn_t r = api_->by_pci(own.ok() ? own->c_str() : bus_id.c_str(), &d.handle);
  if (r != NVML_SUCCESS && own.ok() && *own != bus_id) r = api_->by_pci(bus_id.c_str(), &d.handle);
  if (r != NVML_SUCCESS) {
    return absl::NotFoundError(
        absl::StrCat(api_->Error("nvmlDeviceGetHandleByPciBusId_v2", r), " for ", bus_id));
  }
  return d;
}

std::optional<uint32_t> Nvml::SmClockMhz(NvmlDevice device) const {
  unsigned mhz = 0;
  if (api_->clock == nullptr || api_->clock(device.handle, NVML_CLOCK_SM, &mhz) != NVML_SUCCESS) {
    return std::nullopt;
  }
  return mhz;
}

std::optional<uint64_t> Nvml::ClocksEventReasons(NvmlDevice device) const {
  unsigned long long reasons = 0;
  if (api_->event_reasons == nullptr || api_->event_reasons(device.handle, &reasons) != NVML_SUCCESS) {
    return std::nullopt;
  }
  return reasons;
}

absl::StatusOr<uint64_t> Nvml::TotalEnergyMj(NvmlDevice device) const {
  if (api_->total_energy == nullptr) {
    return absl::UnimplementedError("NVML lacks nvmlDeviceGetTotalEnergyConsumption (a driver before R384?)");
  }
  unsigned long long mj = 0;
  if (const nvmlReturn_t r = api_->total_energy(device.handle, &mj); r != NVML_SUCCESS) {
    return absl::UnavailableError(api_->Error("nvmlDeviceGetTotalEnergyConsumption", r));
  }
  return mj;
}

namespace {

// The parts of Nvml::Describe. Each calls its queries through the resolved
// entry points `a` (Nvml::Api); what fails (NOT_SUPPORTED, NO_PERMISSION, a
// missing entry point) leaves the fact unset.
template <typename Api>
void DescribeIdentity(const Api& a, nvmlDevice_t d, NvmlDeviceFacts& f) {
  auto text = [&](auto fn, unsigned size, std::optional<std::string>& out) {
    std::string buf(size, '\0');
    if (fn != nullptr && fn(d, buf.data(), size) == NVML_SUCCESS) out = std::string(buf.c_str());
  };
  text(a.name, kNameBufferSize, f.name);
  text(a.uuid, kUuidBufferSize, f.uuid);
  text(a.serial, kSerialBufferSize, f.serial);
  nvmlPciInfo_t pci{};
  if (a.pci_info != nullptr && a.pci_info(d, &pci) == NVML_SUCCESS) {
    f.pci_bus_id = std::string(pci.busId);
    f.pci_device_id = pci.pciDeviceId;
  }
  nvmlMemory_t memory{};
  if (a.memory != nullptr && a.memory(d, &memory) == NVML_SUCCESS) f.memory_bytes = memory.total;
}

template <typename Api>
void DescribeClocksAndPower(const Api& a, nvmlDevice_t d, NvmlDeviceFacts& f) {
  auto clock = [&](auto fn, int type, std::optional<uint32_t>& out) {
    unsigned v = 0;
    if (fn != nullptr && fn(d, type, &v) == NVML_SUCCESS) out = v;
  };
  clock(a.default_app_clock, NVML_CLOCK_SM, f.default_sm_clock_mhz);
  // Applications clocks are set per graphics domain, which the SM clock
  // follows; a driver that will not answer for the SM domain does for it.
  if (!f.default_sm_clock_mhz) clock(a.default_app_clock, NVML_CLOCK_GRAPHICS, f.default_sm_clock_mhz);
  clock(a.default_app_clock, NVML_CLOCK_MEM, f.default_mem_clock_mhz);
  if (f.default_sm_clock_mhz) {
    f.default_clock_source = "default applications clock";
  } else {
    clock(a.max_clock, NVML_CLOCK_SM, f.default_sm_clock_mhz);
    clock(a.max_clock, NVML_CLOCK_MEM, f.default_mem_clock_mhz);
    if (f.default_sm_clock_mhz) f.default_clock_source = "max clock";
  }
  clock(a.clock, NVML_CLOCK_SM, f.sm_clock_mhz);
  clock(a.clock, NVML_CLOCK_MEM, f.mem_clock_mhz);
  if (unsigned v = 0; a.power_limit != nullptr && a.power_limit(d, &v) == NVML_SUCCESS) f.power_limit_mw = v;
  if (unsigned v = 0; a.power_usage != nullptr && a.power_usage(d, &v) == NVML_SUCCESS) f.power_usage_mw = v;
  if (unsigned long long v = 0; a.total_energy != nullptr && a.total_energy(d, &v) == NVML_SUCCESS) {
    f.total_energy_mj = v;
  }
  clock(a.temperature, NVML_TEMPERATURE_GPU, f.temperature_c);
  if (int p = 0; a.pstate != nullptr && a.pstate(d, &p) == NVML_SUCCESS && p >= 0 && p <= 15) {
    f.pstate = static_cast<uint32_t>(p);
  }
}

template <typename Api>
void DescribeMemoryHealth(const Api& a, nvmlDevice_t d, NvmlDeviceFacts& f) {
  auto ecc = [&](int type, int counter, std::optional<uint64_t>& out) {
    unsigned long long v = 0;
    if (a.ecc_errors != nullptr && a.ecc_errors(d, type, counter, &v) == NVML_SUCCESS) out = v;
  };
  if (int current = 0, pending = 0;
      a.ecc_mode != nullptr && a.ecc_mode(d, &current, &pending) == NVML_SUCCESS) {
    f.ecc_enabled = current != 0;
  }
  ecc(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, f.ecc_volatile_corrected);
  ecc(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, f.ecc_volatile_uncorrected);
  ecc(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, f.ecc_aggregate_corrected);
  ecc(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, f.ecc_aggregate_uncorrected);
  if (unsigned corrected = 0, uncorrected = 0, pending = 0, failed = 0;
      a.remapped_rows != nullptr &&
      a.remapped_rows(d, &corrected, &uncorrected, &pending, &failed) == NVML_SUCCESS) {
    f.remapped_rows_corrected = corrected;
    f.remapped_rows_uncorrected = uncorrected;
    f.remap_pending = pending != 0;
    f.remap_failed = failed != 0;
  }
}

template <typename Api>
void DescribeLinkAndModes(const Api& a, nvmlDevice_t d, NvmlDeviceFacts& f) {
  auto number = [&](auto fn, std::optional<uint32_t>& out) {
    unsigned v = 0;
    if (fn != nullptr && fn(d, &v) == NVML_SUCCESS) out = v;
  };
  number(a.pcie_gen, f.pcie_gen);
  number(a.pcie_width, f.pcie_width);
  number(a.pcie_gen_max, f.pcie_gen_max);
  number(a.pcie_width_max, f.pcie_width_max);
  if (unsigned current = 0, pending = 0;
      a.mig_mode != nullptr && a.mig_mode(d, &current, &pending) == NVML_SUCCESS) {
    f.mig_enabled = current != 0;
  }
  if (int mode = 0; a.persistence != nullptr && a.persistence(d, &mode) == NVML_SUCCESS) {
    f.persistence_enabled = mode != 0;
  }
  if (int mode = 0; a.compute_mode != nullptr && a.compute_mode(d, &mode) == NVML_SUCCESS) {
    static constexpr const char* kModes[] = {"default", "exclusive_thread", "prohibited",
                                             "exclusive_process"};
    f.compute_mode = mode >= 0 && mode <= 3 ? kModes[mode] : absl::StrCat("mode ", mode);
  }
}

template <typename Api>
void DescribeProcesses(const Api& a, nvmlDevice_t d, NvmlDeviceFacts& f) {
  if (a.processes == nullptr) return;
  // The list can grow between the sizing call and the reading one.
  std::vector<nvmlProcessInfo_t> infos;
  unsigned n = 0;
  nvmlReturn_t r = a.processes(d, &n, nullptr);
  for (int attempt = 0; attempt < 3 && r == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
    n += 8;
    infos.resize(n);
    r = a.processes(d, &n, infos.data());
  }
  if (r != NVML_SUCCESS) return;
  std::vector<NvmlProcess> list;
  for (unsigned i = 0; i < n && i < infos.size(); ++i) {
    NvmlProcess p;
    p.pid = infos[i].pid;
    if (infos[i].usedGpuMemory != kValueNotAvailable) p.used_memory_bytes = infos[i].usedGpuMemory;
    list.push_back(p);
  }
  f.compute_processes = std::move(list);
}

}  // namespace

NvmlDeviceFacts Nvml::Describe(NvmlDevice device) const {
  NvmlDeviceFacts f;
  DescribeIdentity(*api_, device.handle, f);
  DescribeClocksAndPower(*api_, device.handle, f);
  DescribeMemoryHealth(*api_, device.handle, f);
  DescribeLinkAndModes(*api_, device.handle, f);
  DescribeProcesses(*api_, device.handle, f);
  f.clocks_event_reasons = ClocksEventReasons(device);
  return f;
}

NvmlThrottleSource::NvmlThrottleSource(const Nvml& nvml, NvmlDevice device,
                                       double default_sm_clock_mhz)
    : nvml_(nvml), device_(device), default_sm_clock_mhz_(default_sm_clock_mhz) {}

ThrottleReading ThrottleReadingOf(std::optional<uint32_t> sm_clock_mhz,
                                  std::optional<uint64_t> clocks_event_reasons) {
  ThrottleReading r;
  if (!sm_clock_mhz) return r;
  r.valid = true;
  r.reasons = clocks_event_reasons.value_or(0);
  // IsThrottled judges no clock of 0: between samples (the back-off, a
  // case's host-side set-up) the device idles down, and that reading would
  // otherwise mark the next sample throttled.
  r.sm_clock_mhz = (r.reasons & kReasonGpuIdle) != 0 ? 0.0 : *sm_clock_mhz;
  return r;
}

absl::StatusOr<double> NvmlThrottleSource::EnergyJoules() {
  absl::StatusOr<uint64_t> mj = nvml_.TotalEnergyMj(device_);
  if (!mj.ok()) return mj.status();
  return static_cast<double>(*mj) / 1e3;
}

ThrottleReading NvmlThrottleSource::Read() {
  const std::optional<uint32_t> clock = nvml_.SmClockMhz(device_);
  if (!clock) return ThrottleReading{};
  return ThrottleReadingOf(clock, nvml_.ClocksEventReasons(device_));
}

}  // namespace perfgate
