// The CUDA backend of the model: bf16 activations and weights for compute,
// fp32 master weights, gradients and AdamW moments, fp32 accumulation. The
// matrix products go through cuBLASLt (strided-batched for the attention
// scores and values); the memory-bound parts (embedding, LayerNorm, causal
// softmax, GELU, residual add, cross-entropy, AdamW) are our own kernels,
// each with its backward.
//
// nvcc compiles the implementation as C++17, so this header carries no CUDA
// or C++20 types: streams are void*. Errors follow suites/cuda/check.h:
// UNAVAILABLE when the machine lacks what the model needs (a device, enough
// free memory, cuBLASLt: skip), another code naming the call or the bad
// argument otherwise (fail). Built only with PERFGATE_WITH_CUDA; every call
// needs a device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "suites/transformer/transformer.h"

namespace perfgate::suites::transformer::cuda {

/// Sums a device buffer of fp32 gradients over the data-parallel ranks, in
/// place, enqueued on `stream` (a cudaStream_t). NCCL in the suites; a test
/// may supply its own.
class AllReducer {
 public:
  virtual ~AllReducer() = default;
  /// The data-parallel ranks the sum runs over.
  virtual int ranks() const = 0;
  /// Enqueues the in-place sum of `count` floats on `stream`.
  virtual absl::Status AllReduceSum(float* device_data, size_t count, void* stream) = 0;
};

/// The model on one device. Buffers are sized for config.batch × config.seq
/// and allocated once; nothing allocates during a step, a prefill or a
/// decode, so steps can be timed and decode can be captured as a graph.
class CudaModel {
 public:
  /// Uploads `params` (MakeLayout(config).total fp32 values) to `device`
  /// and allocates everything. UNAVAILABLE when there is no device or the
  /// model does not fit in its free memory (the message says how much it needs).
  static absl::StatusOr<std::unique_ptr<CudaModel>> Create(const Config& config,
                                                           const std::vector<float>& params, int device);
  /// As Create, for Prefill and decode only: no gradients, optimizer state
  /// or per-position logits, and one layer's activations shared by all
  /// layers, so large models serve large batches. The training calls return
  /// an error.
  static absl::StatusOr<std::unique_ptr<CudaModel>> CreateForInference(const Config& config,
                                                                       const std::vector<float>& params,
                                                                       int device);
  ~CudaModel();
  CudaModel(const CudaModel&) = delete;
  CudaModel& operator=(const CudaModel&) = delete;

  /// The configuration the model was created with.
  const Config& config() const;

  // ---- training ----
  /// Uploads a batch (inputs and targets batch × seq, batch <= config.batch,
  /// seq <= config.seq) used by every later step until the next call.
  absl::Status SetBatch(const int32_t* inputs, const int32_t* targets, int batch, int seq);
  /// Forward pass of the current batch; returns the mean cross-entropy,
  /// copied back (this synchronises).
  absl::StatusOr<float> Forward();
  /// Backward pass of the last Forward into the fp32 gradients (overwritten).
  /// With a reducer, each range (blocks last to first, then the embedding
  /// range, as HostModel::Backward) is all-reduced on a second stream as soon
  /// as the compute stream has finished it, and the sum is divided by the
  /// rank count before the optimizer reads it.
  absl::Status Backward(AllReducer* reducer = nullptr);
  /// One AdamW step on the fp32 master weights, then their bf16 copies.
  absl::Status Step(const AdamW& hp);
  /// Forward, Backward(reducer) and Step enqueued back to back and timed with
  /// CUDA events on the compute stream: seconds from the first kernel to the
  /// optimizer's last. The loss is not copied back.
  absl::StatusOr<double> TimedTrainStep(const AdamW& hp, AllReducer* reducer);

  /// A copy of the fp32 master weights (synchronises).
  absl::StatusOr<std::vector<float>> DownloadParams() const;
  /// A copy of the fp32 gradients (synchronises).
  absl::StatusOr<std::vector<float>> DownloadGrads() const;

  // ---- inference ----
  /// Runs a prompt (batch × prompt_len) through the model, fills the KV
  /// cache for positions [0, prompt_len), and copies the last position's
  /// logits (batch × vocab, fp32) to *logits when it is not null. It reuses
  /// the training activations, so a Backward after it needs a new Forward.
  absl::Status Prefill(const int32_t* prompt, int batch, int prompt_len, std::vector<float>* logits);
  /// Prefill of the last prompt again, timed with CUDA events (no copy
  /// back): its seconds.
  absl::StatusOr<double> TimedPrefill();
  /// Greedy decoding after a Prefill: each of `steps` decode steps feeds the
  /// argmax of the previous logits (computed on the device) back in, at the
  /// next position. The decode step is captured once as a CUDA graph (the
  /// position lives in device memory) and replayed; `use_graph` false
  /// launches the same kernels eagerly. Returns the tokens, batch × steps.
  /// It starts from the prompt (as RewindToPrompt) and matches
  /// HostModel::Greedy: token 0 is the argmax of the prefill's logits, token
  /// i that of the decode step fed token i−1 (steps − 1 decode steps).
  absl::StatusOr<std::vector<int32_t>> Greedy(int steps, bool use_graph);
  /// Rewinds the cache to the last prompt's length (the prompt's keys and
  /// values are kept), so decode can be timed again from the same context.
  absl::Status RewindToPrompt();
  /// `steps` graph-replayed greedy decode steps from the current position,
  /// timed with CUDA events: seconds for all of them.
  absl::StatusOr<double> TimedDecode(int steps);

  /// Continuous batching, as HostModel::OpenSlots: the KV cache as `slots`
  /// sequences (1 to config.batch), each at a position of its own; a slot
  /// is reused by starting it at 0. Greedy decoding needs a Prefill again.
  absl::Status OpenSlots(int slots);
  /// One continuous-batching step, as HostModel::StepSlots: every run in one
  /// pass (their rows share each matrix product), their keys and values
  /// appended to their slots. Returns each run's next token, the argmax of
  /// its last position's logits (computed on the device), and those logits
  /// (runs × vocab, fp32) into *logits when it is not null. INVALID_ARGUMENT
  /// naming the run CheckSlotRuns refuses. Synchronises: the tokens come back.
  absl::StatusOr<std::vector<int32_t>> StepSlots(const std::vector<SlotRun>& runs,
                                                 std::vector<float>* logits = nullptr);

  /// The compute stream (a cudaStream_t).
  void* stream() const;

  /// The device state; defined in cuda_model_impl.cuh.
  struct Impl;

 private:
  explicit CudaModel(std::unique_ptr<Impl> impl);
  static absl::StatusOr<std::unique_ptr<CudaModel>> CreateImpl(const Config& config,
                                                               const std::vector<float>& params, int device,
                                                               bool inference);
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfgate::suites::transformer::cuda
