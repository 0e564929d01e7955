// The host-side logic of the GPU timing engine; runs without a device.
#include "suites/cuda/device.h"

#include <gtest/gtest.h>

#include <string>

#include "suites/cuda/check.h"
#include "suites/cuda/state_host.h"
#include "suites/cuda/visible_devices.h"

namespace perfgate::cuda {
namespace {

TEST(BatchIterations, SizesABatchToLastAtLeastTheMinimum) {
  EXPECT_EQ(BatchIterations(1e-5, 5e-4), 50u);
  EXPECT_EQ(BatchIterations(3e-5, 5e-4), 17u);  // rounded up, never short
  EXPECT_EQ(BatchIterations(1e-3, 5e-4), 1u);   // long work: one launch
  EXPECT_EQ(BatchIterations(1e-9, 5e-4, 1000), 1000u);
  EXPECT_EQ(BatchIterations(0, 5e-4, 1000), 1000u);
}

absl::Status FailingCall() {
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaErrorInvalidValue);
  return absl::OkStatus();
}

absl::Status NoDevice() {
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaErrorNoDevice);
  return absl::OkStatus();
}

absl::Status FailingCublas() {
  PERFGATE_CUBLAS_RETURN_IF_ERROR(7);
  return absl::OkStatus();
}

TEST(CudaCheck, NamesTheCallFileAndLine) {
  const absl::Status s = FailingCall();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_NE(s.message().find("device_test.cc:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("cudaErrorInvalidValue"), std::string::npos) << s.message();
  EXPECT_EQ(NoDevice().code(), absl::StatusCode::kUnavailable);  // the machine: a skip
  EXPECT_NE(FailingCublas().message().find("cuBLAS status 7"), std::string::npos);
}

// The runtime calls a missing driver "insufficient"; every path says there is none.
TEST(VisibleDevices, AMachineWithoutADriverIsToldSoNotThatItsDriverIsTooOld) {
  int driver = -1;
  ASSERT_EQ(cudaDriverGetVersion(&driver), cudaSuccess);
  const absl::StatusOr<int> devices = VisibleDevices();
  const absl::Status available = DeviceAvailable();
  if (driver == 0) {
    EXPECT_EQ(devices.status(), absl::UnavailableError(kNoCudaDriver));
    EXPECT_EQ(available, absl::UnavailableError(kNoCudaDriver));
  } else {
    EXPECT_NE(devices.status().message(), kNoCudaDriver);
    EXPECT_EQ(available.ok(), devices.ok());
  }
}

TEST(Conclude, SkipsOnUnavailableAndFailsOnAnyOtherError) {
  suites::State skipped(BenchmarkId{"s", "a", {}}, {suites::MetricKind::kTime}, EngineOptions{}, 0);
  Conclude(skipped, absl::UnavailableError("no CUDA driver"));
  EXPECT_TRUE(skipped.skipped());
  EXPECT_EQ(skipped.reason(), "no CUDA driver");
  suites::State failed(BenchmarkId{"s", "b", {}}, {suites::MetricKind::kTime}, EngineOptions{}, 0);
  Conclude(failed, absl::InternalError("C[0,0] = 1, expected 2"));
  EXPECT_TRUE(failed.failed());
}

TEST(StateHost, AnErrorInASampleEndsTheLoopAndDiscardsThatSample) {
  EngineOptions o;
  o.min_time_s = 0;
  suites::State state(BenchmarkId{"s", "n", {}}, {suites::MetricKind::kTime}, o, 0);
  StateHost host(state);
  int calls = 0;
  const absl::Status s = host.Measure([] { return absl::OkStatus(); },
                                      [&]() -> absl::StatusOr<double> {
                                        if (++calls == 3) return absl::DeadlineExceededError("blocked");
                                        return 0.001;
                                      });
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(calls, 3);
  EXPECT_FALSE(state.measured());  // nothing recorded from an aborted loop
}

TEST(StateHost, ForwardsWorkAndSamplesToTheState) {
  EngineOptions o;
  o.min_time_s = 0;
  o.min_samples = 10;
  suites::State state(BenchmarkId{"s", "n", {}}, {suites::MetricKind::kTime, suites::MetricKind::kBandwidth}, o, 0.25);
  StateHost host(state);
  EXPECT_EQ(host.inject_fraction(), 0.25);
  host.SetBytesPerIteration(2e9);
  ASSERT_TRUE(host.Measure([] { return absl::OkStatus(); },
                           []() -> absl::StatusOr<double> { return 0.002; }).ok());
  CaseResult r = state.TakeResult();
  ASSERT_GE(r.samples.size(), 10u);
  EXPECT_DOUBLE_EQ(r.samples[0].values[1], 1000);  // 2 GB in 2 ms
}

}  // namespace
}  // namespace perfgate::cuda
