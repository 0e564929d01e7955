#include "agent/probe.h"

#include <gtest/gtest.h>

#include "agent/runner.h"

namespace perfgate::agent {
namespace {

constexpr char kEpycCpuinfo[] = R"(processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 25
model name	: AMD EPYC 7B13 64-Core Processor
flags		: fpu vme de

processor	: 1
vendor_id	: AuthenticAMD
model name	: AMD EPYC 7B13 64-Core Processor
)";

constexpr char kGraceCpuinfo[] = R"(processor	: 0
BogoMIPS	: 2000.00
CPU implementer	: 0x41
CPU architecture: 8
CPU part	: 0xd4f

processor	: 1
CPU implementer	: 0x41
CPU part	: 0xd4f
)";

TEST(Probe, ParsesX86Cpuinfo) {
  CpuInfo c = ParseCpuInfo(kEpycCpuinfo);
  EXPECT_EQ(c.vendor_id, "AuthenticAMD");
  EXPECT_EQ(c.model_name, "AMD EPYC 7B13 64-Core Processor");
  EXPECT_EQ(c.logical_cpus, 2u);
}

TEST(Probe, ParsesArmCpuinfo) {
  CpuInfo c = ParseCpuInfo(kGraceCpuinfo);
  EXPECT_EQ(c.vendor_id, "arm");
  EXPECT_EQ(c.model_name, "Neoverse V2");
  EXPECT_EQ(c.logical_cpus, 2u);
}

TEST(Probe, ParsesMeminfoAndOsRelease) {
  EXPECT_EQ(ParseMemTotal("MemFree: 5 kB\nMemTotal:       24634788 kB\n"), 24634788ull * 1024);
  EXPECT_EQ(ParseMemTotal("nothing"), 0u);
  EXPECT_EQ(ParseOsPrettyName("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"),
            "Debian GNU/Linux 12 (bookworm)");
}

TEST(Probe, CpuOnlyMachineGetsACpuSku) {
  CudaProbe none;
  none.note = "no CUDA driver installed";
  Environment e = BuildEnvironment(ParseCpuInfo(kEpycCpuinfo), 24ull << 30, "6.1.0", "Debian", none);
  EXPECT_EQ(e.sku, "cpu-amd-epyc-7b13");
  EXPECT_EQ(e.fields.at("gpu_count"), "0");
  EXPECT_EQ(e.fields.at("memory_gib"), "24");
  EXPECT_EQ(e.fields.at("kernel"), "6.1.0");
}

TEST(Probe, GpuMachineGetsTheGpuSkuAndVersions) {
  CudaProbe cuda;
  cuda.available = true;
  cuda.driver_version = 12080;
  cuda.runtime_version = 13000;
  GpuInfo g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.total_memory = 85'520'809'984ull;
  g.sm_count = 132;
  g.cc_major = 9;
  cuda.devices = {g, g};
  Environment e = BuildEnvironment(ParseCpuInfo(kEpycCpuinfo), 1ull << 40, "6.1.0", "Debian", cuda);
  EXPECT_EQ(e.sku, "h100-sxm5-80gb");
  EXPECT_EQ(e.fields.at("gpu_count"), "2");
  EXPECT_EQ(e.fields.at("cuda_driver"), "12.8");
  EXPECT_EQ(e.fields.at("cuda_runtime"), "13.0");
  EXPECT_EQ(e.fields.at("compute_capability"), "9.0");
}

TEST(Probe, ThisMachineProbesWithoutFailing) {
  ProbeResult p = ProbeMachine();
  EXPECT_FALSE(p.environment.sku.empty());
  EXPECT_GT(p.cpu.logical_cpus, 0u);
  EXPECT_GT(p.memory_bytes, 0u);
  // Where no GPU is visible the probe says why instead of failing.
  if (!p.cuda.available) {
    EXPECT_FALSE(p.cuda.note.empty());
  }
}

TEST(Slowdown, ParsesCaseAndPercentSplittingAtTheLastEquals) {
  auto s = ParseInjection("--inject-slowdown", "kernels/copy{bytes=1024}=25");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->pattern, "kernels/copy{bytes=1024}");
  EXPECT_DOUBLE_EQ(s->fraction, 0.25);
  EXPECT_TRUE(ParseInjection("--inject-slowdown", "k/x*=10%").ok());
  EXPECT_FALSE(ParseInjection("--inject-slowdown", "k/x*").ok());
  EXPECT_FALSE(ParseInjection("--inject-slowdown", "k/x*=abc").ok());
  EXPECT_FALSE(ParseInjection("--inject-slowdown", "k/x*=-5").ok());
}

// An H100 SXM5 as NVML describes it at rest.
NvmlDeviceFacts H100Facts() {
  NvmlDeviceFacts f;
  f.name = "NVIDIA H100 80GB HBM3";
  f.uuid = "GPU-5e3b0a4c-6c2e-4f1b-9d7e-0a1b2c3d4e5f";
  f.serial = "1654922001234";
  f.pci_device_id = 0x233010de;
  f.default_sm_clock_mhz = 1980;
  f.default_mem_clock_mhz = 2619;
  f.default_clock_source = "default applications clock";
  f.sm_clock_mhz = 345;
  f.power_limit_mw = 700000;
  f.temperature_c = 31;
  f.pstate = 0;
  f.ecc_enabled = true;
  f.ecc_volatile_uncorrected = 0;
  f.pcie_gen = 5;
  f.pcie_width = 16;
  f.pcie_gen_max = 5;
  f.pcie_width_max = 16;
  f.mig_enabled = false;
  f.persistence_enabled = true;
  f.compute_mode = "default";
  f.compute_processes = std::vector<NvmlProcess>{{100, 1u << 20}, {4242, std::nullopt}};
  return f;
}

CudaProbe TwoH100s() {
  CudaProbe cuda;
  cuda.available = true;
  cuda.driver_version = 12080;
  cuda.runtime_version = 13000;
  GpuInfo g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.total_memory = 85'520'809'984ull;
  g.sm_count = 132;
  g.cc_major = 9;
  g.pci_bus_id = "0000:1b:00.0";
  g.uuid = "GPU-5e3b0a4c-6c2e-4f1b-9d7e-0a1b2c3d4e5f";
  cuda.devices = {g, g};
  cuda.devices[1].index = 1;
  cuda.devices[1].pci_bus_id = "0000:29:00.0";
  return cuda;
}

TEST(Probe, NvmlFactsThatMoveNumbersJoinTheEnvironment) {
  SoftwareVersions sw;
  sw.nvidia_driver = "570.124.06";
  sw.cublas = "13.1.0";
  sw.image_digest = "sha256:0f1e";
  const Environment e = BuildEnvironment(ParseCpuInfo(kEpycCpuinfo), 1ull << 40, "6.1.0", "Debian",
                                         TwoH100s(), {H100Facts(), H100Facts()}, sw);
  EXPECT_EQ(e.sku, "h100-sxm5-80gb");
  EXPECT_EQ(e.fields.at("nvidia_driver"), "570.124.06");
  EXPECT_EQ(e.fields.at("cublas"), "13.1.0");
  EXPECT_EQ(e.fields.at("cudnn"), "absent");
  EXPECT_EQ(e.fields.at("image_digest"), "sha256:0f1e");
  EXPECT_EQ(e.fields.at("power_limit_w"), "700");
  EXPECT_EQ(e.fields.at("default_sm_clock_mhz"), "1980");
  EXPECT_EQ(e.fields.at("pcie_gen_max"), "5");
  EXPECT_EQ(e.fields.at("mig_mode"), "disabled");
  EXPECT_EQ(e.fields.at("ecc_mode"), "enabled");
  EXPECT_EQ(e.fields.at("persistence_mode"), "enabled");
  EXPECT_EQ(e.fields.at("compute_mode"), "default");
  // Volatile facts stay out, so the environment of the same setup is stable.
  for (const auto& [k, v] : e.fields) {
    EXPECT_EQ(k.find("temperature"), std::string::npos) << k;
    EXPECT_NE(v, "GPU-5e3b0a4c-6c2e-4f1b-9d7e-0a1b2c3d4e5f") << k;
  }
}

TEST(Probe, EnvironmentIsTheSameWhateverTheVolatileFactsSay) {
  NvmlDeviceFacts hot = H100Facts();
  hot.temperature_c = 83;
  hot.sm_clock_mhz = 1755;
  hot.pstate = 2;
  hot.ecc_volatile_corrected = 12;
  hot.compute_processes = std::vector<NvmlProcess>{};
  const CpuInfo cpu = ParseCpuInfo(kEpycCpuinfo);
  EXPECT_EQ(BuildEnvironment(cpu, 1ull << 40, "6.1.0", "Debian", TwoH100s(), {H100Facts(), H100Facts()}).Hash(),
            BuildEnvironment(cpu, 1ull << 40, "6.1.0", "Debian", TwoH100s(), {hot, hot}).Hash());
}

TEST(Probe, DevicesThatDisagreeListEachValue) {
  NvmlDeviceFacts capped = H100Facts();
  capped.power_limit_mw = 500000;
  const Environment e = BuildEnvironment(ParseCpuInfo(kEpycCpuinfo), 1ull << 40, "6.1.0", "Debian",
                                         TwoH100s(), {H100Facts(), capped});
  EXPECT_EQ(e.fields.at("power_limit_w"), "700,500");
}

TEST(Probe, WithoutNvmlTheEnvironmentComesFromTheCudaRuntime) {
  CudaProbe cuda = TwoH100s();
  cuda.devices[0].ecc_enabled = true;
  cuda.devices[0].compute_mode = "default";
  const Environment e = BuildEnvironment(ParseCpuInfo(kEpycCpuinfo), 1ull << 40, "6.1.0", "Debian", cuda);
  EXPECT_EQ(e.sku, "h100-sxm5-80gb");
  EXPECT_EQ(e.fields.at("ecc_mode"), "enabled");
  EXPECT_EQ(e.fields.count("power_limit_w"), 0u);
  EXPECT_EQ(e.fields.count("nvidia_driver"), 0u);
}

TEST(Probe, DetailsCarryTheVolatileFactsPerDeviceAndWhyNvmlIsMissing) {
  const auto d = BuildDetails(TwoH100s(), {H100Facts(), NvmlDeviceFacts{}}, "ok",
                              {{"slurm_job_id", "77"}});
  EXPECT_EQ(d.at("nvml"), "ok");
  EXPECT_EQ(d.at("slurm_job_id"), "77");
  EXPECT_EQ(d.at("gpu0.serial"), "1654922001234");
  EXPECT_EQ(d.at("gpu0.temperature_c"), "31");
  EXPECT_EQ(d.at("gpu0.pstate"), "P0");
  EXPECT_EQ(d.at("gpu0.pcie_gen"), "5");
  EXPECT_EQ(d.at("gpu0.compute_processes"), "100,4242");
  EXPECT_EQ(d.at("gpu1.pci_bus_id"), "0000:29:00.0");
  EXPECT_EQ(d.count("gpu1.temperature_c"), 0u);  // NVML told nothing of it

  const auto none = BuildDetails(TwoH100s(), {}, "unavailable: NVML not found", {});
  EXPECT_EQ(none.at("nvml"), "unavailable: NVML not found");
  EXPECT_EQ(none.at("gpu0.uuid"), "GPU-5e3b0a4c-6c2e-4f1b-9d7e-0a1b2c3d4e5f");
}

TEST(Probe, HealthLeavesTheAgentOutOfOtherProcesses) {
  const auto health = HealthOf(TwoH100s(), {H100Facts()}, 4242);
  ASSERT_EQ(health.size(), 2u);
  EXPECT_EQ(health[0].pci_bus_id, "0000:1b:00.0");
  EXPECT_EQ(*health[0].other_process_pids, std::vector<uint32_t>{100});
  EXPECT_EQ(health[0].pcie_width_max, 16u);
  EXPECT_FALSE(health[1].other_process_pids.has_value());
}

TEST(Probe, ReadsSlurmIdsThatAreSet) {
  const std::map<std::string, std::string> vars = {
      {"SLURM_JOB_ID", "9001"}, {"SLURM_ARRAY_TASK_ID", "3"}, {"SLURM_PROCID", ""}};
  auto get = [&](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(SlurmDetails(get), (std::map<std::string, std::string>{
                                   {"slurm_array_task_id", "3"}, {"slurm_job_id", "9001"}}));
}

TEST(Probe, RecordsWhereEachGpuLibraryCameFromAndSkipsLinesWithoutOne) {
  const std::string libraries =
      "libnccl.so.2 /opt/nccl/libnccl.so.2 (from the loader's cache, ldconfig -p);libcublasLt.so.13 not found "
      "(searched LD_LIBRARY_PATH);stray;";
  auto get = [&](const char* name) -> const char* {
    return std::string(name) == "PERFGATE_GPU_LIBRARIES" ? libraries.c_str() : nullptr;
  };
  EXPECT_EQ(GpuLibraryDetails(get),
            (std::map<std::string, std::string>{
                {"library.libcublasLt.so.13", "not found (searched LD_LIBRARY_PATH)"},
                {"library.libnccl.so.2", "/opt/nccl/libnccl.so.2 (from the loader's cache, ldconfig -p)"}}));
  EXPECT_TRUE(GpuLibraryDetails([](const char*) -> const char* { return nullptr; }).empty());
}

TEST(Probe, DecodesLibraryVersionNumbers) {
  EXPECT_EQ(CublasVersionText(130100), "13.1.0");
  EXPECT_EQ(CudnnVersionText(90100), "9.1.0");
  EXPECT_EQ(CudnnVersionText(8907), "8.9.7");
  EXPECT_EQ(NcclVersionText(22809), "2.28.9");
  EXPECT_EQ(NcclVersionText(2804), "2.8.4");
}

TEST(Probe, CountsThrottledSamplesPerCase) {
  CaseResult c;
  c.benchmark = {"kernels", "copy", {}};
  c.samples = {{0, {1.0}, true}, {1, {1.0}, false}, {2, {1.0}, true}};
  const auto counts = ThrottleCounts({c});
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].benchmark, "kernels/copy");
  EXPECT_EQ(counts[0].samples, 3u);
  EXPECT_EQ(counts[0].throttled, 2u);
}

}  // namespace
}  // namespace perfgate::agent
