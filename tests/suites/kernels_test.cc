#include "suites/kernels/kernels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "suites/builtin.h"
#include "suites/kernels/numerics.h"

namespace perfgate::suites {
namespace {

EngineOptions Quick() {
  EngineOptions o;
  o.min_samples = 3;
  o.min_time_s = 0;
  o.timeout_s = 0.5;
  return o;
}

CaseResult RunOne(const std::string& filter, const std::map<std::string, std::vector<std::string>>& sets) {
  auto cases = BuiltinRegistry().Select({"kernels"}, {filter}, sets);
  EXPECT_TRUE(cases.ok());
  EXPECT_EQ(cases->size(), 1u);
  State state(cases->front().id, cases->front().metrics, Quick(), 0);
  cases->front().spec->body(state);
  return state.TakeResult();
}

TEST(KernelsHost, CopyVerifiesAndCountsReadPlusWrite) {
  CaseResult r = RunOne("kernels/copy*", {{"bytes", {"4194304"}}});
  EXPECT_NE(r.status, CaseStatus::kFailed) << r.reason;
  ASSERT_FALSE(r.samples.empty());
  const Sample& s = r.samples.front();
  // bandwidth = 2 * bytes / time
  EXPECT_NEAR(s.values[1], 2 * 4194304.0 / (s.values[0] / 1e3) / 1e9, 1e-9 * s.values[1]);
}

TEST(KernelsHost, TriadVerifiesAgainstTheReference) {
  CaseResult r = RunOne("kernels/triad*", {{"bytes", {"1048576"}}});
  EXPECT_NE(r.status, CaseStatus::kFailed) << r.reason;
  EXPECT_FALSE(r.samples.empty());
}

TEST(KernelsHost, SgemmMatchesTheReferenceAndCountsTwoMnk) {
  CaseResult r = RunOne("kernels/sgemm{k=512*", {});
  EXPECT_NE(r.status, CaseStatus::kFailed) << r.reason;
  ASSERT_FALSE(r.samples.empty());
  const Sample& s = r.samples.front();
  EXPECT_NEAR(s.values[1], 2.0 * 512 * 512 * 512 / (s.values[0] / 1e3) / 1e9, 1e-9 * s.values[1]);
}

// --inject-work lengthens the inner dimension (the counts grow with it) while
// the flops stay those of the nominal k, and the product still verifies.
TEST(KernelsHost, SgemmWithAddedWorkRunsALongerKAndCountsTheNominalFlops) {
  auto cases = BuiltinRegistry().Select({"kernels"}, {"kernels/sgemm{k=512*"}, {});
  ASSERT_TRUE(cases.ok());
  ASSERT_EQ(cases->size(), 1u);
  State state(cases->front().id, cases->front().metrics, Quick(), 0);
  state.set_work_fraction(0.1);
  cases->front().spec->body(state);
  EXPECT_EQ(state.added_work(), "injected work +10 % (51 more of the inner dimension k than its 512)");
  CaseResult r = state.TakeResult();
  // The product verified (a wrong one fails the case); on a busy machine the
  // quick options' timeout may end the samples before the noise target.
  ASSERT_NE(r.status, CaseStatus::kFailed) << r.reason;
  ASSERT_FALSE(r.samples.empty());
  const Sample& s = r.samples.front();
  EXPECT_NEAR(s.values[1], 2.0 * 512 * 512 * 512 / (s.values[0] / 1e3) / 1e9, 1e-9 * s.values[1]);
}

TEST(KernelsHost, SgemmOnTheCpuClockTimesTheThreadAndAsksForOneThread) {
  CaseResult r = RunOne("kernels/sgemm{clock=cpu,k=512*", {{"clock", {"cpu"}}});
  EXPECT_NE(r.status, CaseStatus::kFailed) << r.reason;  // timed out at its noise is not failed
  EXPECT_FALSE(r.samples.empty());
  CaseResult threads = RunOne("kernels/sgemm{clock=cpu,k=512*", {{"clock", {"cpu"}}, {"threads", {"2"}}});
  EXPECT_EQ(threads.status, CaseStatus::kFailed);
  EXPECT_NE(threads.reason.find("set threads=1"), std::string::npos) << threads.reason;
  CaseResult typo = RunOne("kernels/sgemm{clock=cpus,k=512*", {{"clock", {"cpus"}}});
  EXPECT_EQ(typo.status, CaseStatus::kFailed);
  EXPECT_NE(typo.reason.find("clock 'cpus': expected wall or cpu"), std::string::npos) << typo.reason;
}

TEST(KernelsHost, BadParametersFailTheCase) {
  CaseResult r = RunOne("kernels/copy*", {{"bytes", {"lots"}}});
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("not an integer"), std::string::npos);
}

TEST(KernelsReference, GemmReferenceComputesAKnownProduct) {
  const float a[] = {1, 2, 3, 4, 5, 6};     // 2x3
  const float b[] = {7, 8, 9, 10, 11, 12};  // 3x2
  float c[4];
  kernels::GemmReference(a, b, c, 2, 2, 3);
  EXPECT_EQ(c[0], 58);
  EXPECT_EQ(c[1], 64);
  EXPECT_EQ(c[2], 139);
  EXPECT_EQ(c[3], 154);
}

TEST(KernelsReference, RandomFillHasNoZerosAndIsSeeded) {
  std::vector<float> x(1000), y(1000);
  kernels::FillRandom(x.data(), x.size(), 7);
  kernels::FillRandom(y.data(), y.size(), 7);
  EXPECT_EQ(x, y);
  for (float v : x) EXPECT_GE(v, 0.5f);
}

std::vector<std::string> CaseKeys(const std::vector<CaseInstance>& cases) {
  std::vector<std::string> out;
  for (const auto& c : cases) out.push_back(c.id.Key());
  return out;
}

TEST(KernelsGpu, GemmIsSelectedBySuiteRelativeFilterAndDtypeSet) {
  auto cases = BuiltinRegistry().Select({"kernels"}, {"gemm*"}, {{"dtype", {"bf16", "fp8"}}});
  ASSERT_TRUE(cases.ok()) << cases.status();
  EXPECT_EQ(CaseKeys(*cases), (std::vector<std::string>{
                              "kernels/gemm{dtype=bf16,k=4096,m=4096,n=4096}",
                              "kernels/gemm{dtype=fp8,k=4096,m=4096,n=4096}",
                              "kernels/gemm{dtype=bf16,k=8192,m=8192,n=8192}",
                              "kernels/gemm{dtype=fp8,k=8192,m=8192,n=8192}",
                              "kernels/gemm{dtype=bf16,k=4096,m=4096,n=14336}",
                              "kernels/gemm{dtype=fp8,k=4096,m=4096,n=14336}",
                              "kernels/gemm{dtype=bf16,k=28672,m=8192,n=8192}",
                              "kernels/gemm{dtype=fp8,k=28672,m=8192,n=8192}"}));
  for (const CaseInstance& c : *cases) {
    EXPECT_EQ(c.metrics, (std::vector<MetricKind>{MetricKind::kTime, MetricKind::kTflops}));
  }
}

TEST(KernelsGpu, CasesRunInDependencyOrderWithCeilingsLast) {
  auto cases = BuiltinRegistry().Select({"kernels"}, {"device_copy*", "rmsnorm*", "ceiling*"}, {});
  ASSERT_TRUE(cases.ok());
  ASSERT_GE(cases->size(), 3u);
  EXPECT_EQ(cases->front().id.name, "device_copy");  // the roof rmsnorm divides by
  EXPECT_EQ((*cases)[1].id.name, "rmsnorm");
  EXPECT_EQ(cases->back().id.name, "ceiling");
}

TEST(KernelsGpu, DefaultWorkingSetsExceedFourTimesTheLargestL2) {
  auto cases = BuiltinRegistry().Select({"kernels"}, {"device_*", "rmsnorm*"}, {});
  ASSERT_TRUE(cases.ok());
  constexpr double kLargestL2 = 126.0 * (1 << 20);  // B200
  for (const CaseInstance& c : *cases) {
    double bytes = 0;
    if (c.id.name == "rmsnorm") {
      bytes = kernels::RmsNormBytesMoved(std::stoll(c.id.params.at("rows")), std::stoll(c.id.params.at("hidden")));
    } else {
      bytes = std::stod(c.id.params.at("bytes"));
    }
    EXPECT_GE(bytes, 4 * kLargestL2) << c.id.Key();
  }
}

TEST(KernelsGpu, CeilingsReportBandwidthForCopyAndTflopsForGemms) {
  auto cases = BuiltinRegistry().Select({"kernels"}, {"ceiling*"}, {});
  ASSERT_TRUE(cases.ok());
  ASSERT_EQ(cases->size(), 6u);  // copy and five GEMM dtypes
  for (const CaseInstance& c : *cases) {
    const bool copy = c.id.params.at("what") == "copy";
    EXPECT_EQ(c.metrics, std::vector<MetricKind>{copy ? MetricKind::kBandwidth : MetricKind::kTflops})
        << c.id.Key();
  }
}

// Where the listing says a GPU case would skip, running it skips with those
// words and fails nothing; where a device is present the small sizes run.
TEST(KernelsGpu, CasesSkipWithTheListedReasonWhenTheyCannotRunHere) {
  auto cases = BuiltinRegistry().Select(
      {"kernels"}, {"device_*", "gemm*", "rmsnorm*", "ceiling{what=copy}"},
      {{"bytes", {"1048576"}}, {"rows", {"64"}}, {"dtype", {"bf16"}}, {"m", {"256"}}, {"n", {"256"}},
       {"k", {"256"}}});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_FALSE(cases->empty());
  for (const CaseInstance& c : *cases) {
    ASSERT_TRUE(c.spec->unavailable) << c.id.Key();
    const std::string why = c.spec->unavailable(c.id);
    State state(c.id, c.metrics, Quick(), 0);
    c.spec->body(state);
    CaseResult r = state.TakeResult();
    EXPECT_NE(r.status, CaseStatus::kFailed) << c.id.Key() << ": " << r.reason;
    if (!why.empty()) {
      EXPECT_EQ(r.status, CaseStatus::kSkipped) << c.id.Key();
      EXPECT_EQ(r.reason, why);
    }
  }
}

}  // namespace
}  // namespace perfgate::suites
