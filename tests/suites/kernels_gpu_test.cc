// The CUDA cases on a real device, at small sizes and short time limits:
// each must verify and measure. Without a device every test skips with the
// runtime's reason.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/stats.h"
#include "suites/builtin.h"
#include "suites/cuda/device.h"
#include "suites/kernels/ceilings.h"

namespace perfgate::suites {
namespace {

class KernelsGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    const absl::Status available = cuda::DeviceAvailable();
    if (!available.ok()) GTEST_SKIP() << "no CUDA device: " << available.message();
    kernels::Ceilings::Process().Clear();
  }

  static EngineOptions Short() {
    EngineOptions o;
    o.min_samples = 5;
    o.min_time_s = 0;
    o.timeout_s = 2;
    return o;
  }

  // Runs every case `filter` selects with `sets`, expecting each measured
  // (or skipped for a reason of the device, such as fp8 on an A100).
  static std::vector<CaseResult> RunAll(const std::string& filter,
                                        const std::map<std::string, std::vector<std::string>>& sets,
                                        double inject = 0) {
    auto cases = BuiltinRegistry().Select({"kernels"}, {filter}, sets);
    EXPECT_TRUE(cases.ok()) << cases.status();
    std::vector<CaseResult> out;
    if (!cases.ok()) return out;
    for (const CaseInstance& c : *cases) {
      State state(c.id, c.metrics, Short(), inject);
      c.spec->body(state);
      CaseResult r = state.TakeResult();
      EXPECT_NE(r.status, CaseStatus::kFailed) << c.id.Key() << ": " << r.reason;
      out.push_back(std::move(r));
    }
    return out;
  }

  static double MedianOf(const CaseResult& r, const std::string& metric) {
    for (size_t i = 0; i < r.metrics.size(); ++i) {
      if (r.metrics[i].name == metric) return stats::Median(kernels::UnthrottledValues(r.samples, i));
    }
    ADD_FAILURE() << r.benchmark.Key() << " has no metric " << metric;
    return 0;
  }
};

TEST_F(KernelsGpu, DeviceCopyVerifiesAndMeasuresPositiveBandwidth) {
  for (const CaseResult& r : RunAll("device_copy*", {{"bytes", {"67108864"}}})) {
    ASSERT_FALSE(r.samples.empty()) << r.reason;
    EXPECT_GT(MedianOf(r, "bandwidth"), 0);
  }
}

TEST_F(KernelsGpu, DeviceTriadVerifiesAndMeasures) {
  for (const CaseResult& r : RunAll("device_triad*", {{"bytes", {"67108864"}}})) {
    ASSERT_FALSE(r.samples.empty()) << r.reason;
    EXPECT_GT(MedianOf(r, "bandwidth"), 0);
  }
}

TEST_F(KernelsGpu, EveryGemmDtypeVerifiesAndMeasuresPositiveTflops) {
  const auto results = RunAll("gemm*", {{"dtype", {"fp32", "tf32", "fp16", "bf16", "fp8", "fp8_f32out"}},
                                        {"m", {"1024"}}, {"n", {"1024"}}, {"k", {"1024"}}});
  ASSERT_EQ(results.size(), 6u);
  for (const CaseResult& r : results) {
    if (r.status == CaseStatus::kSkipped) {
      EXPECT_EQ(r.reason, "fp8 needs compute capability 8.9 or newer") << r.benchmark.Key();
      continue;
    }
    ASSERT_FALSE(r.samples.empty()) << r.benchmark.Key() << ": " << r.reason;
    EXPECT_GT(MedianOf(r, "tflops"), 0) << r.benchmark.Key();
  }
}

TEST_F(KernelsGpu, RmsNormReportsItsFractionOfTheCopyRoof) {
  RunAll("device_copy*", {{"bytes", {"268435456"}}});
  const auto results = RunAll("rmsnorm*", {{"rows", {"4096"}}});
  ASSERT_EQ(results.size(), 1u);
  const CaseResult& r = results.front();
  ASSERT_FALSE(r.samples.empty()) << r.reason;
  const double fraction = MedianOf(r, "roof_fraction");
  EXPECT_GT(fraction, 0);
  EXPECT_NEAR(fraction, MedianOf(r, "bandwidth") / kernels::Ceilings::Process().Best("copy")->median,
              0.05 * fraction);
}

TEST_F(KernelsGpu, CeilingsReportTheBestCaseOfTheRun) {
  RunAll("device_copy*", {{"bytes", {"67108864", "268435456"}}});
  const auto best = kernels::Ceilings::Process().Best("copy");
  ASSERT_TRUE(best.has_value());
  const auto results = RunAll("ceiling{what=copy}", {});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_NEAR(MedianOf(results.front(), "bandwidth"), best->median, 1e-9 * best->median);
}

TEST_F(KernelsGpu, AnInjectedSlowdownLengthensTheMeasuredTime) {
  const auto plain = RunAll("device_copy*", {{"bytes", {"268435456"}}});
  const auto slowed = RunAll("device_copy*", {{"bytes", {"268435456"}}}, 0.5);
  ASSERT_EQ(plain.size(), 1u);
  ASSERT_EQ(slowed.size(), 1u);
  // 50 % more work inside the timed region: well beyond any noise.
  EXPECT_GT(MedianOf(slowed.front(), "time"), 1.3 * MedianOf(plain.front(), "time"));
}

// The engine's pieces on their own, with cudaMemsetAsync as the work.
class GpuEngine : public KernelsGpu {};

cuda::Work Memset(const cuda::DeviceBuffer& buffer) {
  return [&buffer](cudaStream_t s) -> absl::Status {
    const cudaError_t e = cudaMemsetAsync(buffer.get(), 1, buffer.bytes(), s);
    return e == cudaSuccess ? absl::OkStatus() : absl::InternalError(cudaGetErrorString(e));
  };
}

TEST_F(GpuEngine, BatchSamplesRunEnoughLaunchesToLastHalfAMillisecond) {
  auto stream = cuda::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto buffer = cuda::DeviceBuffer::Allocate(64 << 10);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  auto sampler = cuda::BatchSampler::Create(stream->get());
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  auto single = sampler->Calibrate(Memset(*buffer));
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_GT(sampler->iterations(), 1u);  // a 64 KiB memset takes microseconds
  auto per_launch = sampler->Sample(Memset(*buffer));
  ASSERT_TRUE(per_launch.ok()) << per_launch.status();
  EXPECT_GT(*per_launch, 0);
  EXPECT_GE(*per_launch * sampler->iterations(), 0.5 * 5e-4);
}

TEST_F(GpuEngine, ColdSamplesTimeTheWorkAndTheInjectedSpin) {
  auto stream = cuda::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto buffer = cuda::DeviceBuffer::Allocate(256 << 20);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  auto sampler = cuda::ColdSampler::Create(stream->get());
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  auto plain = sampler->Sample(Memset(*buffer));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_GT(*plain, 0);
  sampler->set_injected_seconds(0.01);
  auto slowed = sampler->Sample(Memset(*buffer));
  ASSERT_TRUE(slowed.ok()) << slowed.status();
  EXPECT_GT(*slowed, *plain + 0.005);
}

// A CaseHost that runs the warm-up once and then a fixed number of samples.
class FixedHost final : public cuda::CaseHost {
 public:
  void SetBytesPerIteration(double) override {}
  void SetFlopsPerIteration(double) override {}
  void SetRoof(double) override {}
  double inject_fraction() const override { return 0; }
  absl::Status Measure(const std::function<absl::Status()>& warmup,
                       const std::function<absl::StatusOr<double>()>& sample) override {
    if (absl::Status s = warmup(); !s.ok()) return s;
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<double> t = sample();
      if (!t.ok()) return t.status();
      samples.push_back(*t);
    }
    return absl::OkStatus();
  }
  std::vector<double> samples;
};

TEST_F(GpuEngine, ColdMeasurementRunsTheWorkOnceUnblockedBeforeAnyBlockedSample) {
  // The first launch of a kernel may load it, and a load may wait for the
  // context: it must not happen while the blocking kernel holds the stream.
  auto stream = cuda::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto buffer = cuda::DeviceBuffer::Allocate(1 << 20);
  ASSERT_TRUE(buffer.ok()) << buffer.status();
  auto sampler = cuda::ColdSampler::Create(stream->get());
  ASSERT_TRUE(sampler.ok()) << sampler.status();
  std::vector<cudaError_t> stream_state;  // cudaStreamQuery as each call of the work began
  const cuda::Work memset = Memset(*buffer);
  FixedHost host;
  const absl::Status s = cuda::MeasureCold(host, *sampler, [&](cudaStream_t st) {
    stream_state.push_back(cudaStreamQuery(st));
    cudaGetLastError();  // "not ready" is a state, not an error to report later
    return memset(st);
  });
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(stream_state.size(), 5u);  // primed, warm-up sample, three samples
  EXPECT_EQ(stream_state[0], cudaSuccess);  // idle: nothing holds the stream
  for (size_t i = 1; i < stream_state.size(); ++i) EXPECT_EQ(stream_state[i], cudaErrorNotReady) << i;
  ASSERT_EQ(host.samples.size(), 3u);
  for (double t : host.samples) EXPECT_GT(t, 0);
}

TEST_F(GpuEngine, ABlockingKernelNeverReleasedGivesUpAndSaysSo) {
  auto stream = cuda::Stream::Create();
  ASSERT_TRUE(stream.ok()) << stream.status();
  auto blocker = cuda::BlockingKernel::Create();
  ASSERT_TRUE(blocker.ok()) << blocker.status();
  ASSERT_TRUE(blocker->Block(stream->get(), 0.05).ok());
  ASSERT_EQ(cudaStreamSynchronize(stream->get()), cudaSuccess);  // returns once it gives up
  const absl::Status s = blocker->CheckReleasedInTime(0.05);
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_NE(s.message().find("discarded"), std::string::npos);
}

}  // namespace
}  // namespace perfgate::suites
