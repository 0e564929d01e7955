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
  auto s = ParseSlowdown("kernels/copy{bytes=1024}=25");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->pattern, "kernels/copy{bytes=1024}");
  EXPECT_DOUBLE_EQ(s->fraction, 0.25);
  EXPECT_TRUE(ParseSlowdown("k/x*=10%").ok());
  EXPECT_FALSE(ParseSlowdown("k/x*").ok());
  EXPECT_FALSE(ParseSlowdown("k/x*=abc").ok());
  EXPECT_FALSE(ParseSlowdown("k/x*=-5").ok());
}

}  // namespace
}  // namespace perfgate::agent
