// The NCCL backend on whatever GPUs this machine has: one process driving
// every visible device (world size 1), each operation checked exactly.
#include <gtest/gtest.h>

#include "suites/collectives/collectives.h"
#include "suites/collectives/nccl_backend.h"
#include "suites/cuda/visible_devices.h"

namespace perfgate::suites::collectives {
namespace {

TEST(NcclCollectives, EveryOperationPassesItsCheckOnTheVisibleGpus) {
  absl::Status why = nccl::Available();
  if (why.ok()) why = cuda::VisibleDevices().status();
  if (!why.ok()) GTEST_SKIP() << "needs a CUDA GPU and NCCL: " << why.message();
  EngineOptions options;
  options.min_samples = 5;
  options.min_time_s = 0;
  options.max_noise = 10;
  options.timeout_s = 10;
  World world({});
  for (Op op : kAllOps) {
    for (int in_place = 0; in_place <= (HasInPlace(op) ? 1 : 0); ++in_place) {
      for (const char* bytes : {"4096", "1048576", "16777216"}) {
        BenchmarkId id{"collectives", OpName(op),
                       {{"backend", "nccl"}, {"bytes", bytes}, {"dtype", "float32"},
                        {"inplace", std::to_string(in_place)}}};
        State state(id, {MetricKind::kTime, MetricKind::kAlgBandwidth, MetricKind::kBusBandwidth},
                    options, 0);
        RunCase(state, world, op);
        const CaseResult r = state.TakeResult();
        EXPECT_EQ(r.status, CaseStatus::kOk) << id.Key() << ": " << r.reason;
        if (!r.samples.empty()) {
          std::printf("%-60s %10.3f us %8.2f GB/s busbw\n", id.Key().c_str(),
                      r.samples.back().values[0] * 1e6, r.samples.back().values[2]);
        }
      }
    }
  }
}

}  // namespace
}  // namespace perfgate::suites::collectives
