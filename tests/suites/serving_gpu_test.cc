// inference/serve on the CUDA backend, on a device: continuous-batching
// steps against the host backend, refusals of steps that cannot be, and the
// registered case measuring with every metric. Without a device every test
// skips with the runtime's reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "measure/nvml.h"
#include "suites/builtin.h"
#include "suites/cuda/visible_devices.h"
#include "suites/inference/serve_cuda.h"
#include "suites/transformer/cuda_model.h"
#include "suites/transformer/host_model.h"
#include "suites/transformer/transformer.h"

namespace perfgate::suites {
namespace {

using transformer::Config;
using transformer::SlotRun;
using transformer::cuda::CudaModel;

#define PERFGATE_SKIP_WITHOUT_DEVICE()                                    \
  do {                                                                    \
    const absl::StatusOr<int> visible = perfgate::cuda::VisibleDevices(); \
    if (!visible.ok()) GTEST_SKIP() << visible.status().message();        \
  } while (0)

// The relative L2 distance of the device's logits from the host's: bf16
// weights and activations against fp32 (the model tests' tolerance).
double RelL2(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    norm += double(want[i]) * want[i];
  }
  return std::sqrt(diff / norm);
}

TEST(CudaSlots, ContinuousBatchingGivesTheHostsTokens) {
  PERFGATE_SKIP_WITHOUT_DEVICE();
  const absl::Status verified = inference::VerifySlotsAgainstHost();
  EXPECT_TRUE(verified.ok()) << verified.message();
}

TEST(CudaSlots, EachRunsLogitsMatchTheHostAsPromptsAndDecodesShareAStep) {
  PERFGATE_SKIP_WITHOUT_DEVICE();
  Config c = *transformer::Preset("tiny");
  c.batch = 4;
  const std::vector<float> params = transformer::InitParameters(c, 41);
  auto made = CudaModel::CreateForInference(c, params, 0);
  ASSERT_TRUE(made.ok()) << made.status().message();
  CudaModel& gpu = **made;
  transformer::HostModel host(c, params);
  host.OpenSlots(4);
  ASSERT_TRUE(gpu.OpenSlots(4).ok());
  std::vector<SlotRun> runs = {{0, 0, transformer::SyntheticTokens(7, c.vocab, 1)},
                               {3, 0, transformer::SyntheticTokens(12, c.vocab, 2)},
                               {1, 0, transformer::SyntheticTokens(1, c.vocab, 3)}};
  for (int step = 0; step < 4; ++step) {
    const std::vector<float> want = host.StepSlots(runs);
    std::vector<float> got;
    const absl::StatusOr<std::vector<int32_t>> next = gpu.StepSlots(runs, &got);
    ASSERT_TRUE(next.ok()) << next.status().message();
    ASSERT_EQ(got.size(), want.size());
    EXPECT_LT(RelL2(got, want), 5e-2) << "step " << step;
    // Both go on with the host's picks, each run at its own position.
    for (size_t i = 0; i < runs.size(); ++i) {
      const int32_t pick = transformer::Argmax(want.data() + i * c.vocab, c.vocab);
      runs[i].start += static_cast<int>(runs[i].tokens.size());
      runs[i].tokens = {pick};
    }
    if (step == 1) runs.push_back({2, 0, transformer::SyntheticTokens(5, c.vocab, 4)});  // joins mid-run
  }
}

TEST(CudaSlots, RefusesAStepThatCannotBeNamingTheRun) {
  PERFGATE_SKIP_WITHOUT_DEVICE();
  Config c = *transformer::Preset("tiny");
  c.batch = 2;
  auto made = CudaModel::CreateForInference(c, transformer::InitParameters(c, 1), 0);
  ASSERT_TRUE(made.ok()) << made.status().message();
  CudaModel& gpu = **made;
  EXPECT_EQ(gpu.StepSlots({{0, 0, {1}}}).status().code(), absl::StatusCode::kInternal);  // not opened
  EXPECT_EQ(gpu.OpenSlots(3).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(gpu.OpenSlots(2).ok());
  const absl::Status outside = gpu.StepSlots({{0, 0, {1}}, {2, 0, {1}}}).status();
  EXPECT_EQ(outside.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(outside.message().find("run 1: slot 2"), std::string::npos) << outside.message();
  EXPECT_EQ(gpu.StepSlots({{0, c.seq, {1}}}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(gpu.StepSlots({{1, 0, {1, 2}}}).ok());  // and the model still runs
}

TEST(CudaServe, TheRegisteredCaseMeasuresEveryMetricAndItsEnergyWhereTheDeviceCounts) {
  PERFGATE_SKIP_WITHOUT_DEVICE();
  auto cases = BuiltinRegistry().Select({"inference"}, {"serve{backend=cuda*"}, {{"rate", {"200"}}});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 1u);
  const CaseInstance& ci = cases->front();
  EngineOptions o;
  o.sample_count = 2;
  State state(ci.id, ci.metrics, o, 0);
  // The device's energy counter, as the agent reads it, where NVML loads.
  absl::StatusOr<std::unique_ptr<Nvml>> nvml = Nvml::Load();
  std::unique_ptr<NvmlThrottleSource> source;
  char bus[32] = {};
  if (nvml.ok() && cudaDeviceGetPCIBusId(bus, sizeof bus, 0) == cudaSuccess) {
    const absl::StatusOr<NvmlDevice> device = (*nvml)->DeviceByPciBusId(bus);
    if (device.ok()) {
      const double mhz = (*nvml)->Describe(*device).default_sm_clock_mhz.value_or(0);
      source = std::make_unique<NvmlThrottleSource>(**nvml, *device, mhz);
    }
  }
  state.set_throttle_source(source.get());
  ci.spec->body(state);
  const CaseResult r = state.TakeResult();
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  ASSERT_EQ(r.samples.size(), 2u);
  std::vector<std::string> names;
  for (const MetricSpec& m : r.metrics) names.push_back(m.name);
  for (const char* m : {"ttft_p99", "tpot_p99", "goodput", "preemptions", "kv_occupancy"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), m), names.end()) << m;
  }
  const bool per_token = std::find(names.begin(), names.end(), "energy_per_token") != names.end();
  EXPECT_TRUE(per_token || r.reason.find("energy unavailable") != std::string::npos) << r.reason;
  std::cout << r.reason << "\n";
}

}  // namespace
}  // namespace perfgate::suites
