// The reader of Nsight Compute's CSV and the GPU counts per iteration, on
// files in both of ncu's CSV layouts (tests/data/ncu): the raw page perfgate
// asks for, and the details page a user may hand over.
#include "measure/ncu.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "common/file_io.h"
#include "tests/support/processes.h"

namespace perfgate {
namespace {

std::string Data(const std::string& name) {
  auto text = ReadWholeFile(std::string(PERFGATE_TEST_DATA_DIR) + "/ncu/" + name);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

std::map<std::string, double> ByName(const std::vector<std::pair<MetricSpec, double>>& counts) {
  std::map<std::string, double> out;
  for (const auto& [spec, v] : counts) out[spec.name] = v;
  return out;
}

TEST(NcuCsv, ReadsTheRawPageOneRowPerLaunchPastTheProfilersLinesAndTheUnitsRow) {
  auto launches = ParseNcuCsv(Data("sgemm_raw.csv"), "sgemm_raw.csv");
  ASSERT_TRUE(launches.ok()) << launches.status();
  ASSERT_EQ(launches->size(), 3u);
  EXPECT_EQ((*launches)[0].kernel.rfind("void perfgate::suites::kernels::SgemmTiled<64, 64, 8>", 0), 0u);
  EXPECT_DOUBLE_EQ((*launches)[0].values.at(kNcuInstructions), 1183744);  // "1,183,744"
  EXPECT_DOUBLE_EQ((*launches)[1].values.at(kNcuDramBytes), 3407616);
  EXPECT_DOUBLE_EQ((*launches)[2].values.at(kNcuOccupancy), 47.76);
  // Three samples of one launch each: the counts of one.
  auto counts = GpuCountsPerIteration(*launches, 3);
  ASSERT_TRUE(counts.ok()) << counts.status();
  const auto m = ByName(*counts);
  EXPECT_DOUBLE_EQ(m.at(kGpuInstructionsMetric), 1183744);
  EXPECT_NEAR(m.at(kGpuDramBytesMetric), (3407872.0 + 3407616 + 3408128) / 3, 1e-6);
  EXPECT_NEAR(m.at(kGpuOccupancyMetric), (47.83 + 47.91 + 47.76) / 3, 1e-9);
  for (const auto& [spec, v] : *counts) EXPECT_TRUE(IsCountMetric(spec.name)) << spec.name;
}

TEST(NcuCsv, ReadsTheDetailsPageAndSumsTheKernelsOfAnIteration) {
  auto launches = ParseNcuCsv(Data("two_kernels_details.csv"), "details.csv");
  ASSERT_TRUE(launches.ok()) << launches.status();
  ASSERT_EQ(launches->size(), 2u);
  EXPECT_EQ((*launches)[1].kernel, "gemm_kernel, fused");  // a comma inside a quoted field
  auto counts = GpuCountsPerIteration(*launches, 1);
  ASSERT_TRUE(counts.ok()) << counts.status();
  const auto m = ByName(*counts);
  EXPECT_DOUBLE_EQ(m.at(kGpuInstructionsMetric), 40000);
  EXPECT_DOUBLE_EQ(m.at(kGpuDramBytesMetric), 1048576 + 4194304);
  // Occupancy weighted by each kernel's instructions: (80·1 + 20·3) / 4.
  EXPECT_DOUBLE_EQ(m.at(kGpuOccupancyMetric), 35);
}

TEST(NcuCsv, ANodeThatHidesTheCountersIsAnErrorSayingWhatWouldAllowThem) {
  auto launches = ParseNcuCsv(Data("permission.log"), "ncu.log");
  ASSERT_FALSE(launches.ok());
  EXPECT_EQ(launches.status().code(), absl::StatusCode::kPermissionDenied);
  const std::string why(launches.status().message());
  EXPECT_NE(why.find("ncu.log"), std::string::npos) << why;
  EXPECT_NE(why.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << why;
}

TEST(NcuCsv, NoKernelInTheCountedSamplesIsNoCountAndSaysWhy) {
  auto launches = ParseNcuCsv(Data("no_kernels.log"), "ncu.log");
  ASSERT_TRUE(launches.ok()) << launches.status();
  EXPECT_TRUE(launches->empty());
  auto counts = GpuCountsPerIteration(*launches, 3);
  ASSERT_FALSE(counts.ok());
  EXPECT_NE(counts.status().message().find("no kernel"), std::string::npos) << counts.status();
}

TEST(NcuCsv, TextThatIsNotNcuOutputIsRefusedByName) {
  auto launches = ParseNcuCsv("time,ms\n1,2\n", "bench.csv");
  ASSERT_FALSE(launches.ok());
  EXPECT_NE(launches.status().message().find("bench.csv"), std::string::npos);
  EXPECT_FALSE(GpuCountsPerIteration({{"k", {{kNcuDramBytes, 1}}}}, 1).ok());  // no instructions
  EXPECT_FALSE(GpuCountsPerIteration({{"k", {{kNcuInstructions, 1}}}}, 0).ok());
}

TEST(NcuArgv, ProfilesTheCountedRangeOnlyAndLeavesTheClocksAlone) {
  const std::vector<std::string> argv = NcuArgv("/usr/local/cuda/bin/ncu", "/tmp/x/ncu.csv");
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "/usr/local/cuda/bin/ncu");
  auto after = [&](const std::string& flag) {
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == flag) return argv[i + 1];
    }
    return std::string("(absent)");
  };
  EXPECT_EQ(after("--profile-from-start"), "off");
  EXPECT_EQ(after("--clock-control"), "none");
  EXPECT_EQ(after("--page"), "raw");
  EXPECT_EQ(after("--log-file"), "/tmp/x/ncu.csv");
  EXPECT_EQ(after("--metrics"), std::string(kNcuInstructions) + "," + kNcuDramBytes + "," + kNcuOccupancy);
}

TEST(GpuCountersAccess, ReadsTheDriversProfilingRestriction) {
  auto dir = testing::TempDir::Create();
  ASSERT_TRUE(dir.ok());
  const std::string params = dir->Join("params");
  std::ofstream(params) << "ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n";
  EXPECT_EQ(GpuCountersAccess(params), "admin only (RmProfilingAdminOnly: 1)");
  std::ofstream(params) << "RmProfilingAdminOnly: 0\n";
  EXPECT_EQ(GpuCountersAccess(params), "allowed");
  EXPECT_EQ(GpuCountersAccess(dir->Join("absent")), "no NVIDIA driver");
}

}  // namespace
}  // namespace perfgate
