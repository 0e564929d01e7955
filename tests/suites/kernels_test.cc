#include "suites/kernels/kernels.h"

#include <gtest/gtest.h>

#include <vector>

#include "suites/builtin.h"

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

}  // namespace
}  // namespace perfgate::suites
