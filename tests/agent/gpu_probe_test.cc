// The probe on a real GPU (label `gpu`): skipped, with the reason, where no
// CUDA device or no NVML is present.
#include <gtest/gtest.h>

#include "agent/probe.h"
#include "measure/nvml.h"

namespace perfgate::agent {
namespace {

class GpuProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    probe_ = ProbeMachine();
    if (!probe_.cuda.available) GTEST_SKIP() << "no CUDA device: " << probe_.cuda.note;
    if (!probe_.nvml) GTEST_SKIP() << "NVML " << probe_.nvml_status;
  }
  ProbeResult probe_;
};

TEST_F(GpuProbeTest, MapsEveryCudaDeviceToNvmlAndFillsItsFacts) {
  EXPECT_EQ(probe_.nvml_status, "ok");
  ASSERT_EQ(probe_.gpu_facts.size(), probe_.cuda.devices.size());
  for (size_t i = 0; i < probe_.cuda.devices.size(); ++i) {
    const GpuInfo& g = probe_.cuda.devices[i];
    const NvmlDeviceFacts& f = probe_.gpu_facts[i];
    ASSERT_TRUE(f.name.has_value()) << "gpu " << i;
    EXPECT_EQ(*f.name, g.name);  // the PCI bus id found the same device
    ASSERT_TRUE(f.uuid.has_value());
    EXPECT_EQ(*f.uuid, g.uuid);
    // CUDA's and NVML's spellings of the bus id name one address.
    ASSERT_TRUE(f.pci_bus_id.has_value());
    EXPECT_EQ(CanonicalPciBusId(*f.pci_bus_id).value(), g.pci_bus_id);
    ASSERT_TRUE(f.pcie_gen_max && f.pcie_width_max && f.pcie_gen && f.pcie_width);
    EXPECT_GT(*f.pcie_gen_max, 0u);
    EXPECT_LE(*f.pcie_gen, *f.pcie_gen_max);
    ASSERT_TRUE(f.default_sm_clock_mhz.has_value());
    EXPECT_GT(*f.default_sm_clock_mhz, 0u);
    EXPECT_FALSE(f.default_clock_source.empty());
    ASSERT_TRUE(f.sm_clock_mhz.has_value());
    EXPECT_GT(*f.sm_clock_mhz, 0u);
  }
  EXPECT_FALSE(probe_.environment.fields.at("nvidia_driver").empty());
  EXPECT_TRUE(probe_.details.count("gpu0.temperature_c"));
}

TEST_F(GpuProbeTest, NvmlThrottleSourceReadsARunningClock) {
  ASSERT_TRUE(probe_.nvml_devices[0].has_value());
  NvmlThrottleSource source(*probe_.nvml, *probe_.nvml_devices[0],
                            *probe_.gpu_facts[0].default_sm_clock_mhz);
  const ThrottleReading r = source.Read();
  EXPECT_TRUE(r.valid);
  EXPECT_GT(r.sm_clock_mhz, 0.0);
  EXPECT_GT(source.DefaultSmClockMhz(), 0.0);
}

}  // namespace
}  // namespace perfgate::agent
