#include "common/identity.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace perfgate {
namespace {

TEST(BenchmarkKey, SortsParametersByName) {
  BenchmarkId id{"kernels", "gemm", {{"n", "8192"}, {"dtype", "bf16"}, {"m", "8192"}, {"k", "8192"}}};
  EXPECT_EQ(id.Key(), "kernels/gemm{dtype=bf16,k=8192,m=8192,n=8192}");
}

TEST(BenchmarkKey, OmitsBracesWithoutParameters) {
  EXPECT_EQ((BenchmarkId{"train", "step", {}}).Key(), "train/step");
}

TEST(BenchmarkKey, ParsesWhatItPrints) {
  BenchmarkId id{"collectives", "all_reduce", {{"bytes", "268435456"}, {"inplace", "0"}}};
  auto parsed = ParseBenchmarkKey(id.Key());
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, id);
}

TEST(BenchmarkKey, RefusesMalformedKeysNamingTheProblem) {
  EXPECT_NE(ParseBenchmarkKey("nosuite").status().message().find("no '/'"), std::string::npos);
  EXPECT_NE(ParseBenchmarkKey("k/copy{bytes=1").status().message().find("closing"), std::string::npos);
  EXPECT_NE(ParseBenchmarkKey("k/copy{bytes}").status().message().find("not k=v"), std::string::npos);
  EXPECT_FALSE(ParseBenchmarkKey("/copy").ok());
}

TEST(CpuSku, NormalizesVendorAndModel) {
  EXPECT_EQ(CpuSkuKey("AuthenticAMD", "AMD EPYC 7B13 64-Core Processor"), "cpu-amd-epyc-7b13");
  EXPECT_EQ(CpuSkuKey("GenuineIntel", "Intel(R) Xeon(R) Platinum 8480+"), "cpu-intel-xeon-platinum-8480");
  EXPECT_EQ(CpuSkuKey("GenuineIntel", "Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz"),
            "cpu-intel-xeon-e5-2686-v4");
  EXPECT_EQ(CpuSkuKey("AuthenticAMD", "AMD EPYC"), "cpu-amd-epyc");
  EXPECT_EQ(CpuSkuKey("arm", "Neoverse V2"), "cpu-arm-neoverse-v2");
}

TEST(GpuSku, MapsKnownDevicesToTheirKeys) {
  constexpr uint64_t kGiB = 1ull << 30;
  EXPECT_EQ(GpuSkuKey("NVIDIA H100 80GB HBM3", 79.6 * kGiB), "h100-sxm5-80gb");
  EXPECT_EQ(GpuSkuKey("NVIDIA H100 PCIe", 79.6 * kGiB), "h100-pcie-80gb");
  EXPECT_EQ(GpuSkuKey("NVIDIA H100 NVL", 93.1 * kGiB), "h100-nvl-94gb");
  EXPECT_EQ(GpuSkuKey("NVIDIA H200", 139.8 * kGiB), "h200-141gb");
  EXPECT_EQ(GpuSkuKey("NVIDIA A100-SXM4-40GB", 39.4 * kGiB), "a100-sxm4-40gb");
  EXPECT_EQ(GpuSkuKey("NVIDIA A100 80GB PCIe", 79.2 * kGiB), "a100-pcie-80gb");
  EXPECT_EQ(GpuSkuKey("NVIDIA L40S", 44.5 * kGiB), "l40s-48gb");
}

TEST(GpuSku, FallsBackToAStableSlugForUnknownDevices) {
  const std::string key = GpuSkuKey("NVIDIA RTX 6000 Ada Generation", 47.5 * (1ull << 30));
  EXPECT_EQ(key, "rtx-6000-ada-generation-48gb");
  EXPECT_EQ(key, GpuSkuKey("NVIDIA RTX 6000 Ada Generation", 47.5 * (1ull << 30)));
}

// Every recorded device description in tests/data/devices maps to the SKU
// key it names: what the CUDA runtime and NVML report (name, memory, PCI
// device id) against the key perfgate must store it under.
TEST(GpuSku, MapsEveryRecordedDeviceDescriptionToItsKey) {
  const std::filesystem::path dir = std::filesystem::path(PERFGATE_TEST_DATA_DIR) / "devices";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path());
    const nlohmann::json d = nlohmann::json::parse(in);
    const uint32_t pci_device_id =
        static_cast<uint32_t>(std::stoul(d.at("pci_device_id").get<std::string>(), nullptr, 16));
    const std::string name = d.at("name").get<std::string>();
    const uint64_t memory = d.at("total_memory_bytes").get<uint64_t>();
    EXPECT_EQ(GpuSkuKey(name, memory, pci_device_id), d.at("sku").get<std::string>())
        << entry.path().filename();
    if (!d.value("needs_pci_device_id", false)) {
      // The name and memory alone decide, as without NVML.
      EXPECT_EQ(GpuSkuKey(name, memory), d.at("sku").get<std::string>()) << entry.path().filename();
    }
    ++checked;
  }
  EXPECT_GE(checked, 15) << "device descriptions missing from " << dir;
}

TEST(GpuSku, TellsGh200PartsApartByMemory) {
  constexpr uint64_t kMiB = 1ull << 20;
  EXPECT_EQ(GpuSkuKey("NVIDIA GH200 480GB", 97'871 * kMiB), "gh200-96gb");
  EXPECT_EQ(GpuSkuKey("NVIDIA GH200 480GB", 146'831 * kMiB), "gh200-144gb");
  // The HBM3e part reporting what an H200 does rounds to 141 GB, not 144.
  EXPECT_EQ(GpuSkuKey("NVIDIA GH200 144G HBM3e", 143'771 * kMiB), "gh200-144gb");
  EXPECT_EQ(GpuSkuKey("NVIDIA GH200 480GB", 143'771 * kMiB), "gh200-144gb");
}

TEST(GpuSku, EveryTableKeyIsAKnownExample) {
  for (const char* key : {"h200-nvl-141gb", "b200-180gb", "l4-24gb", "gh200-144gb"}) {
    EXPECT_NE(std::find(KnownSkuExamples().begin(), KnownSkuExamples().end(), key),
              KnownSkuExamples().end())
        << key;
  }
}

TEST(Glob, MatchesStarsAndQuestionMarks) {
  EXPECT_TRUE(GlobMatch("h100-*", "h100-sxm5-80gb"));
  EXPECT_FALSE(GlobMatch("h100-*", "h200-141gb"));
  EXPECT_TRUE(GlobMatch("kernels/sgemm{k=1024*", "kernels/sgemm{k=1024,m=1024,n=1024}"));
  EXPECT_TRUE(GlobMatch("a?00*", "a100-sxm4-40gb"));
  EXPECT_TRUE(GlobMatch("*", ""));
  EXPECT_FALSE(GlobMatch("*x", "abc"));
}

TEST(Environment, HashDependsOnContentOnly) {
  Environment a{"cpu-amd-epyc", {{"kernel", "6.1"}, {"cpu_model", "AMD EPYC"}}};
  Environment b{"cpu-amd-epyc", {{"cpu_model", "AMD EPYC"}, {"kernel", "6.1"}}};
  EXPECT_EQ(a.Hash(), b.Hash());
  EXPECT_EQ(a.Hash().size(), 64u);
  b.fields["kernel"] = "6.2";
  EXPECT_NE(a.Hash(), b.Hash());
  Environment c = a;
  c.sku = "cpu-intel-xeon";
  EXPECT_NE(a.Hash(), c.Hash());
}

TEST(Uuid, IsVersion4AndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    const std::string u = NewUuid();
    EXPECT_TRUE(IsUuid(u)) << u;
    EXPECT_EQ(u[14], '4');
    EXPECT_TRUE(seen.insert(u).second);
  }
  EXPECT_FALSE(IsUuid("not-a-uuid"));
  EXPECT_FALSE(IsUuid("1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0fz"));
}

}  // namespace
}  // namespace perfgate
