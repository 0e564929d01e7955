// The training suite: one optimizer step of the model (suites/transformer) per
// sample: forward, backward and AdamW on a fixed synthetic batch. Reports
// step time, tokens/s and MFU (model FLOPs per step / step time / the
// measured GEMM peak of the same device). training/step runs on one device;
// training/data_parallel runs one rank per device through the collectives
// suite's World, gradients summed in buckets while the backward pass goes on
// (Gloo on the host, NCCL on GPUs), and reports its scaling efficiency
// against one device.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "suites/collectives/world.h"
#include "suites/transformer/transformer.h"
#include "suites/transformer/host_model.h"
#include "suites/registry.h"

namespace perfgate::suites::training {

/// Registers training/step and training/data_parallel.
void Register(Registry& registry);

/// The body of training/data_parallel over `world` (the registered case
/// uses the process's world; tests run ranks as threads, a World each).
void RunDataParallel(State& state, collectives::World& world);

/// The optimizer of every timed step.
transformer::AdamW StepHyperParameters();

/// Sums ranges of a host gradient array over the world's ranks with Gloo, on
/// a thread of its own, in the order they are enqueued, while the caller's
/// backward pass goes on. Every rank must enqueue the same ranges in the same
/// order (HostModel::Backward does).
class HostGradientReducer {
 public:
  HostGradientReducer(collectives::World& world, float* grads);
  ~HostGradientReducer();
  HostGradientReducer(const HostGradientReducer&) = delete;
  HostGradientReducer& operator=(const HostGradientReducer&) = delete;

  /// Queues [begin, end) for summing.
  void Enqueue(size_t begin, size_t end);
  /// Waits until every queued range is summed, then divides the first
  /// `total` values by the rank count: the mean gradient. The first error of
  /// any all-reduce since the last Finish.
  absl::Status Finish(size_t total);

 private:
  void Loop();

  collectives::World& world_;
  float* grads_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<size_t, size_t>> queue_;
  size_t in_flight_ = 0;
  bool stop_ = false;
  absl::Status error_;
  std::thread thread_;
};

/// One data-parallel step on the host: Forward and Backward on this rank's
/// batch with each gradient range summed as soon as it is final, the mean
/// gradient, AdamW. `reducer` null is the one-device step. Returns the loss
/// of this rank's batch.
absl::StatusOr<float> HostTrainStep(transformer::HostModel& model, const int32_t* inputs,
                                    const int32_t* targets, int batch, int seq,
                                    const transformer::AdamW& hp, HostGradientReducer* reducer);

}  // namespace perfgate::suites::training
