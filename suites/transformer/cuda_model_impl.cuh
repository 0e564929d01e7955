// The CUDA backend's state, private to suites/transformer: CudaModel::Impl, split
// over cuda_model_plan.cu (buffers, cuBLASLt plans, set-up and teardown),
// cuda_model_forward.cu, cuda_model_backward.cu and cuda_model_decode.cu.
//
// Precision: fp32 master weights, gradients and AdamW moments; a bf16 copy
// of the weights (written by the AdamW kernel) feeds every matrix product;
// activations saved for backward are bf16, except the residual stream, which
// stays fp32 (it is what the LayerNorms read, and their mean/rstd are fp32);
// cuBLASLt accumulates in fp32.
//
// Fusions: the two residual adds of a block are the beta = 1 epilogue of the
// projection GEMMs (fp32 C = the stream before, fp32 D = the stream after);
// the LM head writes fp32 logits and one kernel computes the loss terms and
// d(logits) = (softmax − onehot)/(batch·seq) in bf16; the LayerNorm backward
// adds into the fp32 residual gradient and writes the bf16 copy the next
// GEMM reads. LayerNorm gains/biases and the embeddings are read in fp32.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "suites/cuda/cublaslt.h"
#include "suites/transformer/transformer.h"
#include "suites/transformer/cuda_kernels.cuh"
#include "suites/transformer/cuda_model.h"

namespace perfgate::suites::transformer::cuda {

namespace k = kernels;
using k::bf16;

/// cuBLASLt's workspace: cuBLAS's recommendation for Hopper; split-K and
/// stream-K algorithms need it.
inline constexpr size_t kWorkspaceBytes = 32u << 20;
/// Rows summed per block in the first pass of the LayerNorm gain/bias
/// gradients.
inline constexpr int kLnChunkRows = 256;

/// One matrix product in row-major terms: C[m, n] = op_a(A)·op_b(B), A
/// stored [m, k] (or [k, m] when ta), B stored [k, n] (or [n, k] when tb),
/// repeated over `batch` matrices at element strides sa, sb, sc. A and B are
/// bf16; C and D are fp32 or bf16 (c_fp32). Ordered, as the plans' key.
struct GemmKey {
  int m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  int batch = 1;
  int64_t sa = 0, sb = 0, sc = 0;
  bool c_fp32 = false;
  auto Tie() const { return std::tie(m, n, k, ta, tb, batch, sa, sb, sc, c_fp32); }
  bool operator<(const GemmKey& o) const { return Tie() < o.Tie(); }
};

/// The descriptors and the heuristic's algorithm of one GemmKey.
struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (our B), B (our A), C = D
  cublasLtMatmulAlgo_t algo{};
};

/// The model on one device: its buffers, plans, streams and passes. Every
/// call enqueues on `stream` and returns the first failed call's status.
struct CudaModel::Impl {
  Config cfg;
  Layout layout;
  int device = 0;
  const perfgate::cuda::CublasLt* lt_ = nullptr;
  cublasLtHandle_t handle = nullptr;
  std::map<GemmKey, GemmPlan> plans;
  bool plan_only = false;  // Gemm() only creates the plan (Plan* functions)
  uint32_t align_bf16 = 256, align_f32 = 256;

  cudaStream_t stream = nullptr, comm_stream = nullptr;
  cudaEvent_t ev_start = nullptr, ev_stop = nullptr, ev_comm = nullptr;
  std::vector<cudaEvent_t> ev_ranges;  // one per reduced range
  void* arena = nullptr;
  size_t arena_bytes = 0;

  // Parameters and optimizer state, flat as MakeLayout.
  float *params = nullptr, *grads = nullptr, *m = nullptr, *v = nullptr;
  bf16* params_bf = nullptr;
  k::DecayGeometry decay;
  int adam_t = 0;

  // Training batch and activations, sized for cfg.batch × cfg.seq tokens;
  // per-layer arrays are [layers][stride].
  int32_t *inputs = nullptr, *targets = nullptr, *prompt = nullptr;
  float* resid = nullptr;  // [layers + 1][T, w]: block l's input; the last feeds lnf
  float* mid = nullptr;    // [layers][T, w]: after attention's residual add
  bf16 *h1 = nullptr, *h2 = nullptr, *att = nullptr;  // [layers][T, w]
  bf16* qkvh = nullptr;                               // [layers][3][B, H, T, hd]
  bf16* probs = nullptr;                              // [layers][B·H, T, T]
  bf16 *u = nullptr, *g = nullptr;                    // [layers][T, 4w]
  float *ln1_stats = nullptr, *ln2_stats = nullptr;   // [layers][2][T]: mean, rstd
  bf16* lnf_out = nullptr;                            // [T, w]
  float* lnf_stats = nullptr;                         // [2][T]
  float* logits = nullptr;                            // [T, vocab]
  bf16* dlogits = nullptr;                            // [T, vocab]
  float *losses = nullptr, *loss = nullptr;
  // Scratch shared by the layers.
  bf16* qkv_rows = nullptr;   // [T, 3w]: qkv GEMM output, d(qkv) in backward
  float* scores = nullptr;    // [B·H, T, T]: S, then dP
  bf16* heads_tmp = nullptr;  // [3][B, H, T, hd]: O; dO and dQ, dK, dV
  float* dres = nullptr;      // [T, w]
  bf16 *dres_bf = nullptr, *dh = nullptr;                  // [T, w]
  bf16* dff = nullptr;                                     // [T, 4w]
  float *ln_part_gain = nullptr, *ln_part_bias = nullptr;  // [chunks][w]
  void* workspace = nullptr;

  // Inference.
  bf16 *k_cache = nullptr, *v_cache = nullptr;  // [layers][B][H][seq][hd]
  float* dec_x = nullptr;                       // [B, w]
  bf16 *dec_h = nullptr, *dec_o = nullptr;      // [B, w]
  bf16* dec_qkv = nullptr;                      // [B, 3w]
  bf16 *dec_u = nullptr, *dec_g = nullptr;      // [B, 4w]
  float* dec_logits = nullptr;                  // [B, vocab]
  int32_t *dec_next = nullptr, *dec_first = nullptr, *dec_log = nullptr;  // [B], [B], [B][max_steps]
  int *dec_pos = nullptr, *dec_step = nullptr;
  int max_steps = 0;
  // Continuous batching: a step's rows (tokens, slots, positions: R each)
  // and its runs' last rows, packed, at most 3·T + B values.
  int32_t* slot_rows = nullptr;
  int open_slots = 0;  // OpenSlots' count; 0: not opened

  int batch = 0, seq = 0;  // current training batch
  bool forward_done = false;
  int pre_batch = 0, pre_len = 0, host_pos = 0, host_step = 0;
  cudaGraphExec_t graph = nullptr;

  // Created for inference: no gradients, optimizer state or logits of every
  // position, and one layer's activations shared by all layers (a forward
  // pass without backward keeps none), so a large model serves batch 64.
  bool inference = false;

  // ---- sizes and per-layer views ----
  size_t Slot(int l) const { return inference ? 0 : size_t(l); }
  size_t T() const { return size_t(cfg.batch) * cfg.seq; }
  size_t W() const { return size_t(cfg.width); }
  size_t ProbsPerLayer() const { return size_t(cfg.batch) * cfg.heads * cfg.seq * cfg.seq; }
  int LnChunks() const { return static_cast<int>((T() + kLnChunkRows - 1) / kLnChunkRows); }
  float* Resid(int l) const { return resid + Slot(l) * T() * W(); }
  float* Mid(int l) const { return mid + Slot(l) * T() * W(); }
  bf16* H1(int l) const { return h1 + Slot(l) * T() * W(); }
  bf16* H2(int l) const { return h2 + Slot(l) * T() * W(); }
  bf16* Att(int l) const { return att + Slot(l) * T() * W(); }
  bf16* Qkvh(int l) const { return qkvh + Slot(l) * 3 * T() * W(); }
  bf16* Probs(int l) const { return probs + Slot(l) * ProbsPerLayer(); }
  bf16* U(int l) const { return u + Slot(l) * T() * 4 * W(); }
  bf16* G(int l) const { return g + Slot(l) * T() * 4 * W(); }
  float* Ln1Stats(int l) const { return ln1_stats + Slot(l) * 2 * T(); }
  float* Ln2Stats(int l) const { return ln2_stats + Slot(l) * 2 * T(); }
  bf16* KCache(int l) const { return k_cache + size_t(l) * T() * W(); }
  bf16* VCache(int l) const { return v_cache + size_t(l) * T() * W(); }
  const bf16* Wb(const Tensor& t) const { return params_bf + t.offset; }
  const float* Pf(const Tensor& t) const { return params + t.offset; }
  float* Gr(const Tensor& t) const { return grads + t.offset; }

  // The attention products over B·H heads of t positions and hd features.
  // S = Q·Kᵀ (fp32); also dP = dO·Vᵀ.
  GemmKey ScoresKey(int bh, int t, int hd) const {
    return GemmKey{t, t, hd, false, true, bh, int64_t(t) * hd, int64_t(t) * hd, int64_t(t) * t, true};
  }
  // O = P·V; also dQ = dS·K.
  GemmKey ValuesKey(int bh, int t, int hd) const {
    return GemmKey{t, hd, t, false, false, bh, int64_t(t) * t, int64_t(t) * hd, int64_t(t) * hd, false};
  }
  // dV = Pᵀ·dO; also dK = dSᵀ·Q.
  GemmKey ValuesGradKey(int bh, int t, int hd) const {
    return GemmKey{t, hd, t, true, false, bh, int64_t(t) * t, int64_t(t) * hd, int64_t(t) * hd, false};
  }

  // The training calls' precondition: the model was not created for inference.
  absl::Status NeedsTraining() const {
    if (!inference) return absl::OkStatus();
    return absl::InternalError("this model was created for inference: it has no gradients or optimizer state");
  }
  // The decode calls' precondition: a Prefill came first.
  absl::Status NeedsPrefill(const char* call) const {
    if (pre_len != 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(call, " needs a Prefill first"));
  }

  // ---- cuda_model_plan.cu: buffers, plans, set-up and teardown ----

  // Every device buffer, from one allocation at `base` (0: measure only);
  // returns the bytes they take.
  size_t Carve(uintptr_t base);
  // Allocates, uploads `host_params`, and plans the full-size passes.
  absl::Status Init(const std::vector<float>& host_params);
  // Synchronises and frees everything; teardown errors have nowhere to go.
  ~Impl();
  // Destroys what a plan holds.
  void DestroyPlan(const GemmPlan& p) const;
  // A cuBLASLt matrix layout, strided-batched when batch > 1.
  absl::Status MakeLayout(cublasLtMatrixLayout_t* out, cudaDataType_t type, uint64_t rows, uint64_t cols,
                          int64_t ld, int batch, int64_t stride);
  // The descriptors and algorithm of `key` into *p.
  absl::Status CreatePlan(const GemmKey& key, GemmPlan* p);
  // The heuristic's first algorithm for `key` under preference `pf`.
  absl::Status ChooseAlgorithm(const GemmKey& key, cublasLtMatmulPreference_t pf, GemmPlan* p);
  // D = alpha·op_a(A)·op_b(B) + beta·C through the cached plan of `key`.
  absl::Status Gemm(const GemmKey& key, const bf16* a, const bf16* b, const void* c, void* d, float beta);
  // y[M, out] = x[M, in]·Wᵀ, plus an fp32 `residual` when given.
  absl::Status Linear(int M, int in, int out, const bf16* x, const bf16* w, void* y, bool y_fp32,
                      const float* residual = nullptr);
  // dX[M, in] = dY[M, out]·W (bf16).
  absl::Status LinearDx(int M, int in, int out, const bf16* dy, const bf16* w, bf16* dx);
  // dW[out, in] = dYᵀ·X (fp32, overwriting the gradient).
  absl::Status LinearDw(int M, int in, int out, const bf16* dy, const bf16* x, float* dw);
  // Every GEMM shape of a training step of the current batch, planned.
  absl::Status PlanTraining();
  // Every GEMM shape of a prefill of B × len and its decode steps, planned.
  absl::Status PlanPrefill(int B, int len);
  // Seconds between ev_start and ev_stop, once ev_stop has happened.
  absl::StatusOr<double> Elapsed();
  // A copy of layout.total fp32 values at `src` (synchronises).
  absl::StatusOr<std::vector<float>> Download(const float* src);

  // ---- cuda_model_forward.cu ----

  // LayerNorm of `rows` fp32 rows into bf16 `y`, mean and rstd into `stats`.
  absl::Status LayerNorm(const float* x, const Tensor& gain, const Tensor& bias, bf16* y, float* stats,
                         int rows);
  // Embedding, blocks and final LayerNorm over `tokens` (B × t).
  absl::Status ForwardBody(const int32_t* tokens, int B, int t, bool fill_cache);
  // The training forward pass of the current batch, loss included.
  absl::Status EnqueueForward();

  // ---- cuda_model_backward.cu ----

  // Gradients of a LayerNorm into dres, dres_bf and the gain and bias.
  absl::Status LayerNormGrad(const bf16* dy, const float* x, const float* stats, const Tensor& gain,
                             const Tensor& bias, int rows, bool accumulate);
  // Hands gradients [begin, end) to `reducer` once they are written.
  absl::Status Reduce(AllReducer* reducer, size_t begin, size_t end, int range);
  // Block l's MLP backwards: d(block output) in dres to d(mid) added.
  absl::Status MlpBackward(int l);
  // Block l's attention backwards: d(mid) in dres to d(block input) added.
  absl::Status AttentionBackward(int l);
  // The backward pass of the last forward, all-reduced through `reducer`.
  absl::Status EnqueueBackward(AllReducer* reducer);
  // One AdamW step and the bf16 copy of the weights.
  absl::Status EnqueueStep(const AdamW& hp);

  // ---- cuda_model_decode.cu ----

  // Loads every kernel the decode graph launches.
  absl::Status PreloadKernels();
  // The logits of dec_h's B rows and their argmax, logged when `log`.
  absl::Status LogitsAndArgmax(int B, bool log);
  // Rows of new tokens through the embedding and the blocks: where their
  // tokens, sequences (null: row r is sequence r) and positions (pos[r ·
  // pos_stride]) are, and the activations they use, `rows` rows each.
  struct StepRows {
    const int32_t* tokens;
    const int32_t* slots;
    const int* pos;
    int pos_stride;
    int rows;
    float* x;
    bf16 *h, *qkv, *o, *u, *g;
  };
  absl::Status EnqueueBlocks(const StepRows& r);
  // One greedy decode step of B sequences at the device-held position.
  absl::Status EnqueueDecodeStep(int B);
  // One continuous-batching step of the rows packed in slot_rows.
  absl::Status EnqueueSlotStep(int rows, int runs);
  // The last prompt through the model: cache filled, first token chosen.
  absl::Status EnqueuePrefill();
  // Back to the position right after the prompt.
  absl::Status EnqueueRewind();
  // One decode step of the prefill's batch as a graph, once.
  absl::Status Capture();
  // `steps` decode steps, from the graph or eagerly.
  absl::Status Decode(int steps, bool use_graph);
};

}  // namespace perfgate::suites::transformer::cuda
