// The host backend of the model: fp32 throughout, matrix products through
// OpenBLAS (cblas_sgemm), everything else in plain loops. It is the
// correctness reference for the CUDA backend (loss, gradients, updated
// weights, greedy tokens) and runs the training and inference suites on
// machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "suites/transformer/transformer.h"

namespace perfgate::suites::transformer {

/// Called by Backward when the gradient of the flat range [begin, end) is
/// final: each block's range, last block first, then the embedding range
/// [0, blocks[0].begin). Data-parallel training all-reduces each range while
/// the backward pass goes on.
using GradientReady = std::function<void(size_t begin, size_t end)>;

/// A model with its parameters, gradients, AdamW state, the activations of
/// the last forward pass, and a KV cache for inference.
class HostModel {
 public:
  /// Takes the parameters (MakeLayout(config).total values, e.g. from
  /// InitParameters). `config` must pass Validate(); batch and seq are the
  /// largest Forward and Prefill/Decode will be asked for.
  HostModel(const Config& config, std::vector<float> params);

  const Config& config() const { return config_; }
  const Layout& layout() const { return layout_; }
  std::vector<float>& params() { return params_; }
  const std::vector<float>& params() const { return params_; }
  /// The gradient of the mean loss of the last Forward, after Backward.
  std::vector<float>& grads() { return grads_; }
  const std::vector<float>& grads() const { return grads_; }

  /// Training forward pass over `batch` sequences of `seq` tokens (inputs and
  /// targets batch × seq, row-major; batch <= config.batch, seq <=
  /// config.seq): keeps the activations Backward needs and returns the mean
  /// cross-entropy over the batch·seq targets.
  float Forward(const int32_t* inputs, const int32_t* targets, int batch, int seq);

  /// The gradient of the last Forward's loss into grads() (overwritten, not
  /// accumulated). `ready`, when set, is called as each range is final.
  void Backward(const GradientReady& ready = nullptr);

  /// One AdamW step with grads() (step counter kept inside, starting at 1).
  void Step(const AdamW& hp);

  /// Inference: runs the prompt (batch × prompt_len tokens) through the
  /// model, fills the KV cache for positions [0, prompt_len), and returns the
  /// logits of the last position, batch × vocab. prompt_len <= config.seq.
  std::vector<float> Prefill(const int32_t* prompt, int batch, int prompt_len);

  /// One decode step: `tokens` (one per sequence of the last Prefill's batch)
  /// at the next position, attending over the cache; appends to the cache and
  /// returns the logits, batch × vocab. Fails (aborts) past config.seq.
  std::vector<float> Decode(const int32_t* tokens);

  /// The next position Decode writes (the cache's length).
  int position() const { return position_; }

  /// Continuous batching: a cache of `slots` sequences, each at a position of
  /// its own (up to config.seq), replacing the batch cache. Slots are filled
  /// and advanced by StepSlots; a slot is reused by starting it at 0.
  void OpenSlots(int slots);

  /// Runs every run in one pass (their rows share each matrix product, as a
  /// serving engine's iteration does), appends their keys and values to their
  /// slots, and returns the logits of each run's last position, runs × vocab.
  /// Aborts on runs CheckSlotRuns refuses.
  std::vector<float> StepSlots(const std::vector<SlotRun>& runs);

  /// Greedy decoding: Prefill the prompt, then `steps` tokens, each the
  /// argmax (lowest index on ties) of the previous logits. Returns
  /// batch × steps tokens.
  std::vector<int32_t> Greedy(const int32_t* prompt, int batch, int prompt_len, int steps);

  /// Logits of a full forward pass without cache (batch × seq × vocab): the
  /// check that Prefill + Decode compute the same function.
  std::vector<float> Logits(const int32_t* inputs, int batch, int seq);

 private:
  struct Activations;
  // The forward pass without loss: fills `a`, ending with the logits.
  void RunForward(Activations& a, const int32_t* inputs, int batch, int seq) const;
  // Aborts unless batch and seq fit the config and every token is in the vocabulary.
  void CheckBatch(const int32_t* inputs, int batch, int seq) const;
  // Runs n new positions of each cached sequence from position_, appends
  // their keys and values, and returns the logits of the last one.
  std::vector<float> RunCached(const int32_t* tokens, int n);

  Config config_;
  Layout layout_;
  std::vector<float> params_, grads_, m_, v_;
  std::vector<uint8_t> decay_;
  int step_ = 0;
  int position_ = 0;
  int cache_batch_ = 0;
  std::vector<float> k_cache_, v_cache_;  // [layers][cache_batch_][seq][width], heads side by side
  std::shared_ptr<Activations> acts_;
};

/// Index of the largest of `n` values (the lowest index on ties).
int Argmax(const float* values, int n);

}  // namespace perfgate::suites::transformer
