#include "agent/probe.h"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <type_traits>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "agent/image.h"
#include "common/file_io.h"
#include "common/identity.h"
#include "measure/ncu.h"

namespace perfgate::agent {
namespace {

// The file's text; "" when it cannot be read (not every kernel has it).
std::string ReadFile(const char* path) { return ReadWholeFile(path).value_or(""); }

std::string Value(absl::string_view line) {
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return "";
  return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
}

std::string FieldName(absl::string_view line) {
  const size_t colon = line.find(':');
  return std::string(absl::StripAsciiWhitespace(line.substr(0, colon)));
}

std::string CudaVersion(int v) { return absl::StrCat(v / 1000, ".", (v % 1000) / 10); }

}  // namespace

CpuInfo ParseCpuInfo(const std::string& text) {
  CpuInfo info;
  std::string implementer, part;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const std::string key = FieldName(line);
    if (key == "processor") ++info.logical_cpus;
    if (key == "vendor_id" && info.vendor_id.empty()) info.vendor_id = Value(line);
    if (key == "model name" && info.model_name.empty()) info.model_name = Value(line);
    if (key == "CPU implementer" && implementer.empty()) implementer = Value(line);
    if (key == "CPU part" && part.empty()) part = Value(line);
  }
  if (info.vendor_id.empty() && !implementer.empty()) {
    // ARM: 0x41 is Arm Ltd. (Neoverse), 0x4e NVIDIA.
    info.vendor_id = implementer == "0x41" ? "arm" : implementer == "0x4e" ? "nvidia" : implementer;
    if (info.model_name.empty()) {
      static const std::pair<const char*, const char*> kParts[] = {
          {"0xd0c", "Neoverse N1"}, {"0xd40", "Neoverse V1"}, {"0xd4f", "Neoverse V2"},
          {"0xd49", "Neoverse N2"}};
      for (const auto& [id, name] : kParts) {
        if (part == id) info.model_name = name;
      }
      if (info.model_name.empty()) info.model_name = absl::StrCat("part ", part);
    }
  }
  return info;
}

uint64_t ParseMemTotal(const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (FieldName(line) != "MemTotal") continue;
    std::vector<std::string> parts = absl::StrSplit(Value(line), ' ', absl::SkipEmpty());
    uint64_t kb = 0;
    if (!parts.empty() && absl::SimpleAtoi(parts[0], &kb)) return kb * 1024;
  }
  return 0;
}

std::string ParseOsPrettyName(const std::string& text) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, "PRETTY_NAME=")) {
      absl::ConsumePrefix(&line, "\"");
      absl::ConsumeSuffix(&line, "\"");
      return std::string(line);
    }
  }
  return "";
}

namespace {

std::string OnOff(bool b) { return b ? "enabled" : "disabled"; }

template <typename T>
std::string Text(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return OnOff(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v;
  } else {
    return absl::StrCat(v);
  }
}

// One value for the machine from a fact of each device: the value when all
// agree, else each device's, comma-separated; nothing when no device has it.
template <typename F>
std::optional<std::string> Collapse(const std::vector<NvmlDeviceFacts>& facts, F field) {
  std::vector<std::string> values;
  for (const NvmlDeviceFacts& f : facts) {
    const auto& v = field(f);
    values.push_back(v ? Text(*v) : "unknown");
  }
  if (values.empty() || std::all_of(values.begin(), values.end(),
                                    [](const std::string& v) { return v == "unknown"; })) {
    return std::nullopt;
  }
  if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values[0]; })) {
    return values[0];
  }
  return absl::StrJoin(values, ",");
}

}  // namespace

Environment BuildEnvironment(const CpuInfo& cpu, uint64_t memory_bytes, const std::string& kernel,
                             const std::string& os, const CudaProbe& cuda,
                             const std::vector<NvmlDeviceFacts>& gpu_facts,
                             const SoftwareVersions& software) {
  Environment env;
  env.fields["cpu_model"] = cpu.model_name;
  env.fields["cpu_vendor"] = cpu.vendor_id;
  env.fields["cpu_logical_cores"] = absl::StrCat(cpu.logical_cpus);
  env.fields["memory_gib"] =
      absl::StrCat(static_cast<uint64_t>(static_cast<double>(memory_bytes) / (1ull << 30) + 0.5));
  env.fields["kernel"] = kernel;
  env.fields["os"] = os;
  env.fields["compiler"] = absl::StrCat("gcc ", __VERSION__);
  env.fields["perfgate_version"] = PERFGATE_VERSION;
  env.fields["image_digest"] = software.image_digest;
  if (!cuda.available || cuda.devices.empty()) {
    env.sku = CpuSkuKey(cpu.vendor_id, cpu.model_name);
    env.fields["gpu_count"] = "0";
    return env;
  }
  const GpuInfo& g = cuda.devices.front();
  const NvmlDeviceFacts* first = gpu_facts.empty() ? nullptr : &gpu_facts.front();
  env.sku = GpuSkuKey(g.name, g.total_memory,
                      first && first->pci_device_id ? *first->pci_device_id : 0);
  env.fields["gpu_name"] = g.name;
  env.fields["gpu_count"] = absl::StrCat(cuda.devices.size());
  env.fields["gpu_memory_bytes"] = absl::StrCat(g.total_memory);
  env.fields["gpu_sm_count"] = absl::StrCat(g.sm_count);
  env.fields["compute_capability"] = absl::StrCat(g.cc_major, ".", g.cc_minor);
  // Whether `--count gpu` can read the kernels' counters here (a sandbox
  // such as gVisor shows no driver parameters and allows none).
  env.fields["gpu_counters"] = GpuCountersAccess();
  env.fields["cuda_driver"] = CudaVersion(cuda.driver_version);
  env.fields["cuda_runtime"] = CudaVersion(cuda.runtime_version);
  env.fields["cublas"] = software.cublas;
  env.fields["cudnn"] = software.cudnn;
  env.fields["nccl"] = software.nccl;
  // ECC and compute mode the CUDA runtime knows as well; NVML overrides below.
  env.fields["ecc_mode"] = OnOff(g.ecc_enabled);
  env.fields["compute_mode"] = g.compute_mode;
  if (!software.nvidia_driver.empty()) env.fields["nvidia_driver"] = software.nvidia_driver;
  auto put = [&](const char* key, std::optional<std::string> v) {
    if (v) env.fields[key] = *v;
  };
  using F = NvmlDeviceFacts;
  put("ecc_mode", Collapse(gpu_facts, [](const F& f) { return f.ecc_enabled; }));
  put("compute_mode", Collapse(gpu_facts, [](const F& f) { return f.compute_mode; }));
  put("mig_mode", Collapse(gpu_facts, [](const F& f) { return f.mig_enabled; }));
  put("persistence_mode", Collapse(gpu_facts, [](const F& f) { return f.persistence_enabled; }));
  put("power_limit_w", Collapse(gpu_facts, [](const F& f) {
        return f.power_limit_mw ? std::optional<uint32_t>(*f.power_limit_mw / 1000) : std::nullopt;
      }));
  put("default_sm_clock_mhz", Collapse(gpu_facts, [](const F& f) { return f.default_sm_clock_mhz; }));
  put("default_mem_clock_mhz", Collapse(gpu_facts, [](const F& f) { return f.default_mem_clock_mhz; }));
  put("pcie_gen_max", Collapse(gpu_facts, [](const F& f) { return f.pcie_gen_max; }));
  put("pcie_width_max", Collapse(gpu_facts, [](const F& f) { return f.pcie_width_max; }));
  return env;
}

std::map<std::string, std::string> BuildDetails(const CudaProbe& cuda,
                                                const std::vector<NvmlDeviceFacts>& gpu_facts,
                                                const std::string& nvml_status,
                                                const std::map<std::string, std::string>& extra) {
  std::map<std::string, std::string> d = extra;
  d["nvml"] = nvml_status;
  if (!cuda.available) d["cuda"] = absl::StrCat("unavailable: ", cuda.note);
  for (size_t i = 0; i < cuda.devices.size(); ++i) {
    const GpuInfo& g = cuda.devices[i];
    const std::string p = absl::StrCat("gpu", g.index, ".");
    d[p + "uuid"] = g.uuid;
    d[p + "pci_bus_id"] = g.pci_bus_id;
    d[p + "max_sm_clock_mhz"] = absl::StrCat(g.max_sm_clock_mhz);
    if (i >= gpu_facts.size()) continue;
    const NvmlDeviceFacts& f = gpu_facts[i];
    auto put = [&](const char* key, const auto& v) {
      if (v) d[p + key] = Text(*v);
    };
    put("serial", f.serial);
    put("temperature_c", f.temperature_c);
    put("sm_clock_mhz", f.sm_clock_mhz);
    put("mem_clock_mhz", f.mem_clock_mhz);
    put("power_usage_mw", f.power_usage_mw);
    put("total_energy_mj", f.total_energy_mj);
    put("pstate", f.pstate ? std::optional<std::string>(absl::StrCat("P", *f.pstate)) : std::nullopt);
    put("ecc_volatile_corrected", f.ecc_volatile_corrected);
    put("ecc_volatile_uncorrected", f.ecc_volatile_uncorrected);
    put("ecc_aggregate_corrected", f.ecc_aggregate_corrected);
    put("ecc_aggregate_uncorrected", f.ecc_aggregate_uncorrected);
    put("remapped_rows_corrected", f.remapped_rows_corrected);
    put("remapped_rows_uncorrected", f.remapped_rows_uncorrected);
    put("remap_pending", f.remap_pending ? std::optional<std::string>(*f.remap_pending ? "yes" : "no") : std::nullopt);
    put("remap_failed", f.remap_failed ? std::optional<std::string>(*f.remap_failed ? "yes" : "no") : std::nullopt);
    put("pcie_gen", f.pcie_gen);
    put("pcie_width", f.pcie_width);
    if (f.clocks_event_reasons) d[p + "clocks_event_reasons"] = absl::StrFormat("0x%x", *f.clocks_event_reasons);
    if (f.default_sm_clock_mhz) d[p + "default_clock_source"] = f.default_clock_source;
    if (f.compute_processes) {
      std::vector<std::string> pids;
      for (const NvmlProcess& proc : *f.compute_processes) pids.push_back(absl::StrCat(proc.pid));
      d[p + "compute_processes"] = absl::StrJoin(pids, ",");
    }
  }
  return d;
}

std::vector<DeviceHealth> HealthOf(const CudaProbe& cuda,
                                   const std::vector<NvmlDeviceFacts>& gpu_facts,
                                   uint32_t self_pid) {
  std::vector<DeviceHealth> out;
  for (size_t i = 0; i < cuda.devices.size(); ++i) {
    DeviceHealth h;
    h.index = cuda.devices[i].index;
    h.pci_bus_id = cuda.devices[i].pci_bus_id;
    if (i < gpu_facts.size()) {
      const NvmlDeviceFacts& f = gpu_facts[i];
      h.ecc_volatile_corrected = f.ecc_volatile_corrected;
      h.ecc_volatile_uncorrected = f.ecc_volatile_uncorrected;
      h.ecc_aggregate_corrected = f.ecc_aggregate_corrected;
      h.ecc_aggregate_uncorrected = f.ecc_aggregate_uncorrected;
      h.remapped_rows_corrected = f.remapped_rows_corrected;
      h.remapped_rows_uncorrected = f.remapped_rows_uncorrected;
      h.pcie_gen = f.pcie_gen;
      h.pcie_width = f.pcie_width;
      h.pcie_gen_max = f.pcie_gen_max;
      h.pcie_width_max = f.pcie_width_max;
      h.mig_enabled = f.mig_enabled;
      if (f.compute_processes) {
        std::vector<uint32_t> others;
        for (const NvmlProcess& p : *f.compute_processes) {
          if (p.pid != self_pid) {
            others.push_back(p.pid);
          } else {
            h.self_listed = true;
          }
        }
        h.other_process_pids = std::move(others);
      }
    }
    out.push_back(std::move(h));
  }
  return out;
}

std::vector<DeviceHealth> ProbeHealth(const ProbeResult& probe) {
  std::vector<NvmlDeviceFacts> facts(probe.cuda.devices.size());
  for (size_t i = 0; probe.nvml && i < probe.nvml_devices.size() && i < facts.size(); ++i) {
    if (probe.nvml_devices[i]) facts[i] = probe.nvml->Describe(*probe.nvml_devices[i]);
  }
  return HealthOf(probe.cuda, facts, static_cast<uint32_t>(getpid()));
}

std::vector<CaseThrottleCount> ThrottleCounts(const std::vector<CaseResult>& cases) {
  std::vector<CaseThrottleCount> out;
  for (const CaseResult& c : cases) {
    CaseThrottleCount t;
    t.benchmark = c.benchmark.Key();
    t.samples = static_cast<uint32_t>(c.samples.size());
    for (const Sample& s : c.samples) t.throttled += s.throttled ? 1 : 0;
    out.push_back(std::move(t));
  }
  return out;
}

std::string CublasVersionText(size_t v) {
  return absl::StrCat(v / 10000, ".", (v % 10000) / 100, ".", v % 100);
}

std::string CudnnVersionText(size_t v) {
  if (v >= 10000) return absl::StrCat(v / 10000, ".", (v % 10000) / 100, ".", v % 100);
  return absl::StrCat(v / 1000, ".", (v % 1000) / 100, ".", v % 100);
}

std::string NcclVersionText(int v) {
  if (v < 0) return "absent";
  return v >= 10000 ? absl::StrCat(v / 10000, ".", (v % 10000) / 100, ".", v % 100)
                    : absl::StrCat(v / 1000, ".", (v % 1000) / 100, ".", v % 100);
}

namespace {

// The first of `names` that loads, or null.
void* OpenFirst(std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (void* h = dlopen(n, RTLD_LAZY | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

}  // namespace

SoftwareVersions ProbeLibraries() {
  SoftwareVersions v;
  if (void* h = OpenFirst({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11",
                           "libcublasLt.so"})) {
    if (auto get = reinterpret_cast<size_t (*)()>(dlsym(h, "cublasLtGetVersion"))) {
      v.cublas = CublasVersionText(get());
    }
    dlclose(h);
  }
  if (void* h = OpenFirst({"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"})) {
    if (auto get = reinterpret_cast<size_t (*)()>(dlsym(h, "cudnnGetVersion"))) {
      v.cudnn = CudnnVersionText(get());
    }
    dlclose(h);
  }
  if (void* h = OpenFirst({"libnccl.so.2", "libnccl.so"})) {
    if (auto get = reinterpret_cast<int (*)(int*)>(dlsym(h, "ncclGetVersion"))) {
      int version = 0;
      if (get(&version) == 0) v.nccl = NcclVersionText(version);  // 0: ncclSuccess
    }
    dlclose(h);
  }
  // A malformed digest stops the agent at start (config.cc); recorded as unpinned should it get here.
  auto digest = RecordedImageDigest(std::getenv("PERFGATE_IMAGE_DIGEST"), InContainer());
  v.image_digest = digest.ok() ? *digest : kUnpinnedImage;
  return v;
}

std::map<std::string, std::string> SlurmDetails(
    const std::function<const char*(const char*)>& getenv) {
  static constexpr std::pair<const char*, const char*> kVars[] = {
      {"SLURM_JOB_ID", "slurm_job_id"},
      {"SLURM_ARRAY_JOB_ID", "slurm_array_job_id"},
      {"SLURM_ARRAY_TASK_ID", "slurm_array_task_id"},
      {"SLURM_PROCID", "slurm_procid"},
      {"SLURM_NODEID", "slurm_nodeid"}};
  std::map<std::string, std::string> out;
  for (const auto& [var, key] : kVars) {
    if (const char* v = getenv(var); v != nullptr && *v != '\0') out[key] = v;
  }
  return out;
}

std::map<std::string, std::string> GpuLibraryDetails(
    const std::function<const char*(const char*)>& getenv) {
  std::map<std::string, std::string> out;
  const char* v = getenv("PERFGATE_GPU_LIBRARIES");
  if (v == nullptr) return out;
  for (absl::string_view line : absl::StrSplit(v, ';', absl::SkipWhitespace())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(line, absl::MaxSplits(' ', 1));
    if (!kv.second.empty()) out[absl::StrCat("library.", kv.first)] = std::string(kv.second);
  }
  return out;
}

std::string Hostname() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

ProbeResult ProbeMachine() {
  ProbeResult r;
  r.cpu = ParseCpuInfo(ReadFile("/proc/cpuinfo"));
  if (r.cpu.logical_cpus == 0) r.cpu.logical_cpus = static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN));
  r.memory_bytes = ParseMemTotal(ReadFile("/proc/meminfo"));
  r.hostname = Hostname();
  utsname uts{};
  uname(&uts);
  r.cuda = ProbeCuda();
  // The runtime prints hex digits in upper case ("0000:1B:00.0"); one
  // spelling keeps run details and health readings comparable across drivers.
  for (GpuInfo& g : r.cuda.devices) {
    if (auto canonical = CanonicalPciBusId(g.pci_bus_id); canonical.ok()) g.pci_bus_id = *canonical;
  }
  r.software = ProbeLibraries();
  r.gpu_facts.resize(r.cuda.devices.size());
  r.nvml_devices.resize(r.cuda.devices.size());
  auto nvml = Nvml::Load();
  if (!nvml.ok()) {
    r.nvml_status = absl::StrCat("unavailable: ", std::string(nvml.status().message()));
  } else {
    r.nvml = std::move(*nvml);
    r.nvml_status = "ok";
    if (auto driver = r.nvml->DriverVersion(); driver.ok()) r.software.nvidia_driver = *driver;
    // CUDA and NVML number devices differently (CUDA_VISIBLE_DEVICES, MIG):
    // the PCI bus id is the one name both know.
    std::vector<std::string> unmapped;
    for (size_t i = 0; i < r.cuda.devices.size(); ++i) {
      auto device = r.nvml->DeviceByPciBusId(r.cuda.devices[i].pci_bus_id);
      if (!device.ok()) {
        unmapped.push_back(std::string(device.status().message()));
        continue;
      }
      r.nvml_devices[i] = *device;
      r.gpu_facts[i] = r.nvml->Describe(*device);
    }
    if (!unmapped.empty()) r.nvml_status = absl::StrCat("partial: ", absl::StrJoin(unmapped, "; "));
  }
  r.environment = BuildEnvironment(r.cpu, r.memory_bytes, uts.release,
                                   ParseOsPrettyName(ReadFile("/etc/os-release")), r.cuda,
                                   r.nvml ? r.gpu_facts : std::vector<NvmlDeviceFacts>{}, r.software);
  std::map<std::string, std::string> extra = SlurmDetails(&std::getenv);
  extra.merge(GpuLibraryDetails(&std::getenv));
  r.details = BuildDetails(r.cuda, r.gpu_facts, r.nvml_status, extra);
  r.details["hostname"] = r.hostname;
  return r;
}

}  // namespace perfgate::agent
