// The transformer the training and inference suites measure: a GPT-style
// decoder (token and position embeddings, pre-norm blocks of causal
// multi-head attention and a GELU MLP with residuals, a final LayerNorm, an
// LM head tied to the token embedding, mean cross-entropy loss), its named
// presets, its FLOP and memory counts, the layout of its parameters in one
// flat array, and its deterministic initialisation.
//
// Plain C++17 with no CUDA and no abseil: the host backend, the CUDA
// backend (compiled by nvcc as C++17) and the suites share it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace perfgate::suites::transformer {

/// The shape of the model and of one training batch.
struct Config {
  int layers = 0;
  int width = 0;   // d_model
  int heads = 0;   // width % heads == 0
  int seq = 0;     // tokens per sequence (and the learned positions' count)
  int batch = 0;   // sequences per step (per rank in data-parallel mode)
  int vocab = 0;

  int head_dim() const { return width / heads; }
  int ffn() const { return 4 * width; }
  int64_t tokens() const { return int64_t{batch} * seq; }
};

/// Preset names, smallest first: tiny (tests), small, medium, large (about
/// 1.3 B parameters, a good part of an 80 GB card at batch 4).
const std::vector<std::string>& PresetNames();
/// The preset called `name`; nullopt when there is none.
std::optional<Config> Preset(const std::string& name);
/// Empty when `config` is a model this code can build, else what is wrong
/// (every field positive, width a multiple of heads, head_dim even and at
/// most 256, width a multiple of 8).
std::string Validate(const Config& config);

/// Where one tensor lives in the flat parameter (and gradient, and optimizer
/// state) array. Matrices are row-major [rows, cols]; a linear layer's
/// weight is [out, in] and computes y = x · Wᵀ (PyTorch's convention).
struct Tensor {
  size_t offset = 0;
  int rows = 0;
  int cols = 1;  // 1 for vectors
  size_t size() const { return size_t(rows) * size_t(cols); }
};

/// One block's tensors; a block's tensors are contiguous in the flat array,
/// in this order, so a block's gradient is one range.
struct BlockLayout {
  Tensor ln1_gain, ln1_bias;  // [width]
  Tensor qkv;                 // [3·width, width]: rows 0..w-1 Q, then K, then V; head h is rows h·hd..
  Tensor proj;                // [width, width], attention output projection
  Tensor ln2_gain, ln2_bias;  // [width]
  Tensor fc;                  // [4·width, width]
  Tensor fc_proj;             // [width, 4·width]
  size_t begin = 0, end = 0;  // the block's range in the flat array
};

/// Every tensor of the model. The flat array holds, in order: wte, wpe,
/// lnf_gain, lnf_bias (the "embedding range" [0, blocks[0].begin)), then the
/// blocks 0..layers-1. Backward finishes the blocks last to first and the
/// embedding range at the very end, which is the order data-parallel buckets
/// are all-reduced in.
struct Layout {
  Tensor wte;                  // [vocab, width], also the LM head (tied)
  Tensor wpe;                  // [seq, width]
  Tensor lnf_gain, lnf_bias;   // [width]
  std::vector<BlockLayout> blocks;
  size_t total = 0;            // parameters in all
};

Layout MakeLayout(const Config& config);

/// Parameters of the model (Layout::total).
int64_t ParameterCount(const Config& config);

/// Model FLOPs of one forward pass over `batch` sequences of `seq` tokens:
/// 2 per multiply-add of every matrix product, the LM head included, and the
/// attention scores and values counted in full (2·2·seq·width per token and
/// layer, as PaLM's MFU does), norms, softmax and GELU not counted.
double ForwardFlops(const Config& config, int64_t batch, int64_t seq);
/// Model FLOPs of one training step: 3 × ForwardFlops (backward is twice the
/// forward's matrix work). MFU divides this by step time and the peak.
double TrainingStepFlops(const Config& config);

/// An estimate of the device memory a training step of `config` needs: fp32
/// master weights, gradients and AdamW moments, bf16 weights, the saved bf16
/// activations (about 30·width bytes per token and layer), the attention
/// probabilities (batch·heads·seq² per layer) and the logits.
double TrainingBytes(const Config& config);

/// The initial parameters from `seed`: linear weights and embeddings normal
/// with std 0.02 (the two residual projections of each block scaled by
/// 1/sqrt(2·layers), as GPT-2), norm gains 1, biases 0. Every value is a
/// function of (seed, index) alone, so any backend gets the same weights.
std::vector<float> InitParameters(const Config& config, uint64_t seed);

/// `count` tokens in [0, vocab) from `seed`, uniform: the synthetic batch
/// (batch × (seq + 1) tokens: inputs are [:, :seq], targets [:, 1:]).
std::vector<int32_t> SyntheticTokens(int64_t count, int vocab, uint64_t seed);

/// Splits a batch of batch × (seq + 1) tokens into inputs and targets, each
/// batch × seq.
void SplitBatch(const std::vector<int32_t>& tokens, int batch, int seq,
                std::vector<int32_t>* inputs, std::vector<int32_t>* targets);

/// One run of a continuous-batching step: `tokens` at positions [start,
/// start + n) of sequence `slot` of a per-sequence KV cache (a prompt, a
/// recomputed prefix, or one decode token). Both backends take these
/// (HostModel::StepSlots, cuda::CudaModel::StepSlots).
struct SlotRun {
  int slot = 0;
  int start = 0;
  std::vector<int32_t> tokens;
};

/// Empty when `runs` can be one step of a cache of `slots` sequences of `seq`
/// positions over `vocab` tokens: at least one run, every run in its own
/// slot, non-empty, inside [0, seq), its tokens in the vocabulary; else what
/// is wrong, naming the run.
std::string CheckSlotRuns(const std::vector<SlotRun>& runs, int slots, int seq, int vocab);

/// The runs of a step as rows, one per token in run order: each row's
/// token, slot and position, and the row holding each run's last token
/// (whose logits the step returns). What a device step uploads.
struct SlotRows {
  std::vector<int32_t> tokens, slots, positions;
  std::vector<int32_t> last;  // one per run
};
SlotRows FlattenSlotRuns(const std::vector<SlotRun>& runs);

/// AdamW's hyper-parameters (decoupled weight decay, applied to matrices
/// and embeddings, not to norm gains and biases).
struct AdamW {
  float lr = 1e-3f;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;
};

/// Whether weight decay applies to parameter `index` of the flat array (true
/// for matrices and embeddings).
std::vector<uint8_t> DecayMask(const Config& config);

/// One AdamW update of `n` parameters at step `t` (1-based), the reference
/// the CUDA kernel is checked against:
///   m = b1·m + (1-b1)·g;  v = b2·v + (1-b2)·g²
///   p -= lr · (m/(1-b1^t) / (sqrt(v/(1-b2^t)) + eps) + wd·decay·p)
void AdamWUpdate(const AdamW& hp, int t, size_t n, float* params, const float* grads, float* m,
                 float* v, const uint8_t* decay);

/// GELU, tanh approximation (GPT-2's), and its derivative.
float Gelu(float x);
float GeluGrad(float x);

}  // namespace perfgate::suites::transformer
