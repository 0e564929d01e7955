#include "agent/probe.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/identity.h"

namespace perfgate::agent {
namespace {

std::string ReadFile(const char* path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Value(absl::string_view line) {
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos) return "";
  return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
}

std::string Key(absl::string_view line) {
  const size_t colon = line.find(':');
  return std::string(absl::StripAsciiWhitespace(line.substr(0, colon)));
}

std::string CudaVersion(int v) { return absl::StrCat(v / 1000, ".", (v % 1000) / 10); }

}  // namespace

CpuInfo ParseCpuInfo(const std::string& text) {
  CpuInfo info;
  std::string implementer, part;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const std::string key = Key(line);
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
    if (Key(line) != "MemTotal") continue;
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

Environment BuildEnvironment(const CpuInfo& cpu, uint64_t memory_bytes, const std::string& kernel,
                             const std::string& os, const CudaProbe& cuda) {
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
  if (cuda.available && !cuda.devices.empty()) {
    const GpuInfo& g = cuda.devices.front();
    env.sku = GpuSkuKey(g.name, g.total_memory);
    env.fields["gpu_name"] = g.name;
    env.fields["gpu_count"] = absl::StrCat(cuda.devices.size());
    env.fields["gpu_memory_bytes"] = absl::StrCat(g.total_memory);
    env.fields["gpu_sm_count"] = absl::StrCat(g.sm_count);
    env.fields["compute_capability"] = absl::StrCat(g.cc_major, ".", g.cc_minor);
    env.fields["cuda_driver"] = CudaVersion(cuda.driver_version);
    env.fields["cuda_runtime"] = CudaVersion(cuda.runtime_version);
  } else {
    env.sku = CpuSkuKey(cpu.vendor_id, cpu.model_name);
    env.fields["gpu_count"] = "0";
  }
  return env;
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
  r.environment = BuildEnvironment(r.cpu, r.memory_bytes, uts.release,
                                   ParseOsPrettyName(ReadFile("/etc/os-release")), r.cuda);
  return r;
}

}  // namespace perfgate::agent
