#include "suites/kernels/ceilings.h"

#include <gtest/gtest.h>

#include "suites/kernels/kernels.h"
#include "suites/seed.h"

namespace perfgate::suites::kernels {
namespace {

TEST(Ceilings, KeepTheCaseWithTheBestMedian) {
  Ceilings book;
  book.Offer("copy", "small", {100, 110, 120});
  book.Offer("copy", "big", {90, 200, 95});  // one lucky sample, worse median
  book.Offer("copy", "best", {130, 140, 135});
  book.Offer("gemm_bf16", "g", {});          // nothing measured: ignored
  ASSERT_TRUE(book.Best("copy").has_value());
  EXPECT_EQ(book.Best("copy")->key, "best");
  EXPECT_EQ(book.Best("copy")->median, 135);
  EXPECT_FALSE(book.Best("gemm_bf16").has_value());
  book.Clear();
  EXPECT_FALSE(book.Best("copy").has_value());
}

TEST(Ceilings, ReportTheSourceValuesAsTheCeilingCasesSamples) {
  const CeilingSource source{"kernels/device_copy{bytes=1}", {2900.5, 3010.25, 2999}, 2999};
  State state(BenchmarkId{"kernels", "ceiling", {{"what", "copy"}}}, {MetricKind::kBandwidth},
              EngineOptions{}, 0);
  RecordCeiling(state, source, MetricKind::kBandwidth);
  CaseResult r = state.TakeResult();
  EXPECT_EQ(r.status, CaseStatus::kOk);
  ASSERT_EQ(r.samples.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(r.samples[i].values[0], source.values[i], 1e-9 * source.values[i]);
  EXPECT_EQ(r.metrics[0].name, "bandwidth");
}

TEST(Ceilings, KnowTheMetricOfEachCeiling) {
  EXPECT_EQ(CeilingMetric("copy"), MetricKind::kBandwidth);
  EXPECT_EQ(CeilingMetric("gemm_fp8"), MetricKind::kTflops);
  EXPECT_FALSE(CeilingMetric("gemm_int4").has_value());
  EXPECT_FALSE(CeilingMetric("triad").has_value());
}

TEST(Ceilings, UnthrottledValuesLeaveMarkedSamplesOut) {
  std::vector<Sample> s = {{0, {1, 10}, false}, {1, {2, 20}, true}, {2, {3, 30}, false}};
  EXPECT_EQ(UnthrottledValues(s, 1), (std::vector<double>{10, 30}));
}

TEST(CaseSeed, IsFnv1aOfTheKey) {
  EXPECT_EQ(CaseSeed(""), 0xcbf29ce484222325ull);  // the FNV offset basis
  EXPECT_EQ(CaseSeed("a"), 0xaf63dc4c8601ec8cull);  // the published FNV-1a test vector
  EXPECT_NE(CaseSeed("kernels/gemm{dtype=bf16}"), CaseSeed("kernels/gemm{dtype=fp8}"));
}

}  // namespace
}  // namespace perfgate::suites::kernels
