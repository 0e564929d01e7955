// The CUDA backend. Precision: fp32 master weights, gradients and AdamW
// moments; a bf16 copy of the weights (written by the AdamW kernel) feeds
// every matrix product; activations saved for backward are bf16, except the
// residual stream, which stays fp32 (it is what the LayerNorms read, and
// their mean/rstd are fp32); cuBLASLt accumulates in fp32.
//
// Fusions: the two residual adds of a block are the beta = 1 epilogue of the
// projection GEMMs (fp32 C = the stream before, fp32 D = the stream after);
// the LM head writes fp32 logits and one kernel computes the loss terms and
// d(logits) = (softmax − onehot)/(batch·seq) in bf16; the LayerNorm backward
// adds into the fp32 residual gradient and writes the bf16 copy the next
// GEMM reads. LayerNorm gains/biases and the embeddings are read in fp32.
//
// Row-major products on column-major cuBLASLt: a row-major [r, c] matrix is
// the column-major [c, r] one, so C = op(A)·op(B) (row-major) is computed as
// Cᵀ = op(B)ᵀ·op(A)ᵀ, i.e. cuBLASLt's A is our B and its B is our A.
#include "suites/model/cuda_model.h"

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "suites/cuda/check.h"
#include "suites/cuda/cublaslt.h"
#include "suites/cuda/visible_devices.h"
#include "suites/model/cuda_kernels.cuh"

namespace perfgate::suites::model::cuda {
namespace {

namespace k = kernels;
using k::bf16;

// cuBLAS's recommendation for Hopper; split-K and stream-K algorithms need it.
constexpr size_t kWorkspaceBytes = 32u << 20;
// Room left for the context, cuBLASLt's own state and graphs.
constexpr size_t kHeadroomBytes = 256u << 20;
// Rows summed per block in the first pass of the LayerNorm gain/bias gradients.
constexpr int kLnChunkRows = 256;

}  // namespace

namespace {

// One matrix product in row-major terms: C[m, n] = op_a(A)·op_b(B), A stored
// [m, k] (or [k, m] when ta), B stored [k, n] (or [n, k] when tb), repeated
// over `batch` matrices at element strides sa, sb, sc. A and B are bf16; C
// and D are fp32 or bf16 (c_fp32).
struct GemmKey {
  int m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  int batch = 1;
  int64_t sa = 0, sb = 0, sc = 0;
  bool c_fp32 = false;
  auto Tie() const { return std::tie(m, n, k, ta, tb, batch, sa, sb, sc, c_fp32); }
  bool operator<(const GemmKey& o) const { return Tie() < o.Tie(); }
};

// The descriptors and the heuristic's algorithm of one GemmKey.
struct GemmPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLASLt's A (our B), B (our A), C = D
  cublasLtMatmulAlgo_t algo{};
};

// Largest power of two dividing `bytes`, at most 256 (cuBLASLt's default).
uint32_t AlignmentOf(size_t bytes) {
  uint32_t a = 1;
  while (a < 256 && bytes % (2 * a) == 0) a *= 2;
  return a;
}

// Offsets from one device allocation, each 256-byte aligned. With base 0 it
// only measures.
class Carver {
 public:
  explicit Carver(uintptr_t base) : base_(base) {}
  template <typename T>
  void Take(T** p, size_t count) {
    used_ = (used_ + 255) / 256 * 256;
    *p = reinterpret_cast<T*>(base_ + used_);
    used_ += count * sizeof(T);
  }
  size_t used() const { return used_; }

 private:
  uintptr_t base_;
  size_t used_ = 0;
};

}  // namespace

struct CudaModel::Impl {
  Config cfg;
  Layout layout;
  int device = 0;
  const perfgate::cuda::CublasLt* lt_ = nullptr;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
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
  bf16* qkv_rows = nullptr;  // [T, 3w]: qkv GEMM output, d(qkv) in backward
  float* scores = nullptr;   // [B·H, T, T]: S, then dP
  bf16* heads_tmp = nullptr; // [3][B, H, T, hd]: O; dO and dQ, dK, dV
  float* dres = nullptr;     // [T, w]
  bf16 *dres_bf = nullptr, *dh = nullptr;  // [T, w]
  bf16* dff = nullptr;                     // [T, 4w]
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

  int batch = 0, seq = 0;  // current training batch
  bool forward_done = false;
  int pre_batch = 0, pre_len = 0, host_pos = 0, host_step = 0;
  cudaGraphExec_t graph = nullptr;

  // Created for inference: no gradients, optimizer state or logits of every
  // position, and one layer's activations shared by all layers (a forward
  // pass without backward keeps none), so a large model serves batch 64.
  bool inference = false;
  size_t Slot(int l) const { return inference ? 0 : size_t(l); }

  size_t T() const { return size_t(cfg.batch) * cfg.seq; }
  size_t W() const { return size_t(cfg.width); }
  size_t ProbsPerLayer() const { return size_t(cfg.batch) * cfg.heads * cfg.seq * cfg.seq; }
  int LnChunks() const { return static_cast<int>((T() + kLnChunkRows - 1) / kLnChunkRows); }

  // Every device buffer, from one allocation at `base` (0: measure only).
  size_t Carve(uintptr_t base) {
    Carver c(base);
    const size_t L = cfg.layers, t = T(), w = W(), total = layout.total, B = cfg.batch;
    const size_t AL = inference ? 1 : L;  // layers of saved activations
    const size_t opt = inference ? 0 : total;
    c.Take(&params, total);
    c.Take(&grads, opt);
    c.Take(&m, opt);
    c.Take(&v, opt);
    c.Take(&params_bf, total);
    c.Take(&inputs, t);
    c.Take(&targets, t);
    c.Take(&prompt, t);
    c.Take(&resid, (inference ? 1 : L + 1) * t * w);
    c.Take(&mid, AL * t * w);
    c.Take(&h1, AL * t * w);
    c.Take(&h2, AL * t * w);
    c.Take(&att, AL * t * w);
    c.Take(&qkvh, AL * 3 * t * w);
    c.Take(&probs, AL * ProbsPerLayer());
    c.Take(&u, AL * t * 4 * w);
    c.Take(&g, AL * t * 4 * w);
    c.Take(&ln1_stats, AL * 2 * t);
    c.Take(&ln2_stats, AL * 2 * t);
    c.Take(&lnf_out, t * w);
    c.Take(&lnf_stats, 2 * t);
    c.Take(&logits, inference ? 0 : t * cfg.vocab);
    c.Take(&dlogits, inference ? 0 : t * cfg.vocab);
    c.Take(&losses, t);
    c.Take(&loss, 1);
    c.Take(&qkv_rows, 3 * t * w);
    c.Take(&scores, ProbsPerLayer());
    c.Take(&heads_tmp, 3 * t * w);
    c.Take(&dres, t * w);
    c.Take(&dres_bf, t * w);
    c.Take(&dh, t * w);
    c.Take(&dff, t * 4 * w);
    c.Take(&ln_part_gain, size_t(LnChunks()) * w);
    c.Take(&ln_part_bias, size_t(LnChunks()) * w);
    char* ws = nullptr;
    c.Take(&ws, kWorkspaceBytes);
    workspace = ws;
    c.Take(&k_cache, L * t * w);
    c.Take(&v_cache, L * t * w);
    c.Take(&dec_x, B * w);
    c.Take(&dec_h, B * w);
    c.Take(&dec_o, B * w);
    c.Take(&dec_qkv, B * 3 * w);
    c.Take(&dec_u, B * 4 * w);
    c.Take(&dec_g, B * 4 * w);
    c.Take(&dec_logits, B * cfg.vocab);
    c.Take(&dec_next, B);
    c.Take(&dec_first, B);
    c.Take(&dec_log, B * size_t(max_steps));
    c.Take(&dec_pos, 1);
    c.Take(&dec_step, 1);
    return c.used();
  }

  ~Impl() {
    // Teardown errors have nowhere to go.
    if (stream != nullptr) cudaStreamSynchronize(stream);
    if (comm_stream != nullptr) cudaStreamSynchronize(comm_stream);
    if (graph != nullptr) cudaGraphExecDestroy(graph);
    if (lt_ != nullptr) {
      for (auto& [key, p] : plans) {
        if (p.a != nullptr) lt_->MatrixLayoutDestroy(p.a);
        if (p.b != nullptr) lt_->MatrixLayoutDestroy(p.b);
        if (p.c != nullptr) lt_->MatrixLayoutDestroy(p.c);
        if (p.desc != nullptr) lt_->MatmulDescDestroy(p.desc);
      }
      if (pref != nullptr) lt_->MatmulPreferenceDestroy(pref);
      if (handle != nullptr) lt_->Destroy(handle);
    }
    for (cudaEvent_t e : ev_ranges) cudaEventDestroy(e);
    if (ev_start != nullptr) cudaEventDestroy(ev_start);
    if (ev_stop != nullptr) cudaEventDestroy(ev_stop);
    if (ev_comm != nullptr) cudaEventDestroy(ev_comm);
    if (arena != nullptr) cudaFree(arena);
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (comm_stream != nullptr) cudaStreamDestroy(comm_stream);
  }

  // ---- cuBLASLt ----

  absl::Status MakeLayout(cublasLtMatrixLayout_t* out, cudaDataType_t type, uint64_t rows, uint64_t cols,
                   int64_t ld, int batch, int64_t stride) {
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatrixLayoutCreate(out, type, rows, cols, ld));
    if (batch > 1) {
      const int32_t count = batch;
      PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                                      sizeof count));
      PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatrixLayoutSetAttribute(
          *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
    return absl::OkStatus();
  }

  absl::Status CreatePlan(const GemmKey& key, GemmPlan* p) {
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // cuBLASLt's A is our B, its B our A (see the file comment).
    const cublasOperation_t transa = key.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t transb = key.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(
        lt_->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(
        lt_->MatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
    // A row-major [r, c] matrix is column-major (rows c, cols r, ld c).
    const uint64_t m = key.m, n = key.n, kk = key.k;
    if (key.tb) {  // B stored [n, k]
      PERFGATE_RETURN_IF_ERROR(MakeLayout(&p->a, CUDA_R_16BF, kk, n, int64_t(kk), key.batch, key.sb));
    } else {  // B stored [k, n]
      PERFGATE_RETURN_IF_ERROR(MakeLayout(&p->a, CUDA_R_16BF, n, kk, int64_t(n), key.batch, key.sb));
    }
    if (key.ta) {  // A stored [k, m]
      PERFGATE_RETURN_IF_ERROR(MakeLayout(&p->b, CUDA_R_16BF, m, kk, int64_t(m), key.batch, key.sa));
    } else {  // A stored [m, k]
      PERFGATE_RETURN_IF_ERROR(MakeLayout(&p->b, CUDA_R_16BF, kk, m, int64_t(kk), key.batch, key.sa));
    }
    PERFGATE_RETURN_IF_ERROR(MakeLayout(&p->c, key.c_fp32 ? CUDA_R_32F : CUDA_R_16BF, n, m, int64_t(n),
                                  key.batch, key.sc));
    cublasLtMatmulPreference_t pf = nullptr;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatmulPreferenceCreate(&pf));
    const absl::Status chosen = ChooseAlgorithm(key, pf, p);
    lt_->MatmulPreferenceDestroy(pf);
    return chosen;
  }

  // The heuristic's first algorithm for `key` under preference `pf` (the
  // workspace and the operands' alignments) into p->algo.
  absl::Status ChooseAlgorithm(const GemmKey& key, cublasLtMatmulPreference_t pf, GemmPlan* p) {
    // Pointers into the flat arrays are only as aligned as the width allows.
    const uint32_t align_c = key.c_fp32 ? align_f32 : align_bf16;
    const uint64_t ws = kWorkspaceBytes;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(
        lt_->MatmulPreferenceSetAttribute(pf, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatmulPreferenceSetAttribute(
        pf, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_bf16, sizeof align_bf16));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatmulPreferenceSetAttribute(
        pf, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_bf16, sizeof align_bf16));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatmulPreferenceSetAttribute(
        pf, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_c, sizeof align_c));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatmulPreferenceSetAttribute(
        pf, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_c, sizeof align_c));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(
        lt_->MatmulAlgoGetHeuristic(handle, p->desc, p->a, p->b, p->c, p->c, pf, 1, &result, &found));
    if (found == 0) {
      return perfgate::cuda::InternalErrorAt(
          __FILE__, __LINE__,
          absl::StrCat("cuBLASLt offers no bf16 algorithm for m=", key.m, " n=", key.n, " k=", key.k,
                       " batch=", key.batch));
    }
    p->algo = result.algo;
    return absl::OkStatus();
  }

  // D = alpha·op_a(A)·op_b(B) + beta·C (row-major; C and D share a layout and
  // may be the same buffer). Plans are cached per key; in plan_only mode
  // this only makes sure the plan exists.
  absl::Status Gemm(const GemmKey& key, const bf16* a, const bf16* b, const void* c, void* d, float beta) {
    auto it = plans.find(key);
    if (it == plans.end()) {
      GemmPlan p;
      const absl::Status e = CreatePlan(key, &p);
      if (!e.ok()) {
        if (p.a != nullptr) lt_->MatrixLayoutDestroy(p.a);
        if (p.b != nullptr) lt_->MatrixLayoutDestroy(p.b);
        if (p.c != nullptr) lt_->MatrixLayoutDestroy(p.c);
        if (p.desc != nullptr) lt_->MatmulDescDestroy(p.desc);
        return e;
      }
      it = plans.emplace(key, p).first;
    }
    if (plan_only) return absl::OkStatus();
    const uint32_t align_c = key.c_fp32 ? align_f32 : align_bf16;
    if (reinterpret_cast<uintptr_t>(a) % align_bf16 != 0 || reinterpret_cast<uintptr_t>(b) % align_bf16 != 0 ||
        reinterpret_cast<uintptr_t>(c) % align_c != 0 || reinterpret_cast<uintptr_t>(d) % align_c != 0) {
      return perfgate::cuda::InternalErrorAt(__FILE__, __LINE__,
                                             "a GEMM operand is less aligned than its plan assumes");
    }
    const float alpha = 1.0f;
    const GemmPlan& p = it->second;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->Matmul(handle, p.desc, &alpha, b, p.a, a, p.b, &beta, c, p.c, d, p.c, &p.algo,
                                  workspace, kWorkspaceBytes, stream));
    return absl::OkStatus();
  }

  // y[M, out] = x[M, in]·Wᵀ (W [out, in]); with an fp32 `residual`,
  // y = residual + x·Wᵀ (residual may be y itself).
  absl::Status Linear(int M, int in, int out, const bf16* x, const bf16* w, void* y, bool y_fp32,
               const float* residual = nullptr) {
    GemmKey key{M, out, in, false, true, 1, 0, 0, 0, y_fp32};
    return Gemm(key, x, w, residual != nullptr ? static_cast<const void*>(residual) : y, y,
                residual != nullptr ? 1.0f : 0.0f);
  }
  // dX[M, in] = dY[M, out]·W (bf16).
  absl::Status LinearDx(int M, int in, int out, const bf16* dy, const bf16* w, bf16* dx) {
    GemmKey key{M, in, out, false, false, 1, 0, 0, 0, false};
    return Gemm(key, dy, w, dx, dx, 0.0f);
  }
  // dW[out, in] = dYᵀ·X (fp32, overwriting the gradient).
  absl::Status LinearDw(int M, int in, int out, const bf16* dy, const bf16* x, float* dw) {
    GemmKey key{out, in, M, true, false, 1, 0, 0, 0, true};
    return Gemm(key, dy, x, dw, dw, 0.0f);
  }

  // The attention products over B·H heads of t positions and hd features.
  GemmKey ScoresKey(int bh, int t, int hd) const {  // S = Q·Kᵀ (fp32); also dP = dO·Vᵀ
    return GemmKey{t, t, hd, false, true, bh, int64_t(t) * hd, int64_t(t) * hd, int64_t(t) * t, true};
  }
  GemmKey ValuesKey(int bh, int t, int hd) const {  // O = P·V; also dQ = dS·K
    return GemmKey{t, hd, t, false, false, bh, int64_t(t) * t, int64_t(t) * hd, int64_t(t) * hd, false};
  }
  GemmKey ValuesGradKey(int bh, int t, int hd) const {  // dV = Pᵀ·dO; also dK = dSᵀ·Q
    return GemmKey{t, hd, t, true, false, bh, int64_t(t) * t, int64_t(t) * hd, int64_t(t) * hd, false};
  }

  // ---- per-layer views ----
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

  // ---- kernels ----
  absl::Status LayerNorm(const float* x, const Tensor& gain, const Tensor& bias, bf16* y, float* stats, int rows) {
    k::LayerNormForward<<<k::RowGrid(rows), k::kThreads, 0, stream>>>(
        x, Pf(gain), Pf(bias), y, stats, stats == nullptr ? nullptr : stats + T(), rows, cfg.width);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

  // Gradients of a LayerNorm: into the residual gradient (added or not) and
  // its bf16 copy, and the gain and bias gradients (written).
  absl::Status LayerNormGrad(const bf16* dy, const float* x, const float* stats, const Tensor& gain,
                      const Tensor& bias, int rows, bool accumulate) {
    const int w = cfg.width;
    k::LayerNormBackward<<<k::RowGrid(rows), k::kThreads, 0, stream>>>(
        dy, x, stats, stats + T(), Pf(gain), dres, dres_bf, rows, w, accumulate);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    const int chunks = (rows + kLnChunkRows - 1) / kLnChunkRows;
    k::LayerNormParamPartials<<<dim3((w + 31) / 32, chunks), dim3(32, 8), 0, stream>>>(
        dy, x, stats, stats + T(), ln_part_gain, ln_part_bias, rows, w, kLnChunkRows);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    k::LayerNormParamFinish<<<k::GridFor(w), k::kThreads, 0, stream>>>(ln_part_gain, ln_part_bias,
                                                                      chunks, w, Gr(gain), Gr(bias));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

  // ---- forward ----

  // Embedding, blocks and the final LayerNorm over `tokens` (B × t); with
  // `fill_cache`, also the KV cache for positions [0, t).
  absl::Status ForwardBody(const int32_t* tokens, int B, int t, bool fill_cache) {
    const int w = cfg.width, H = cfg.heads, hd = cfg.head_dim();
    const int M = B * t, bh = B * H;
    const float scale = 1.0f / std::sqrt(float(hd));
    if (!plan_only) {
      k::EmbedForward<<<k::GridFor(size_t(M) * w), k::kThreads, 0, stream>>>(
          tokens, Pf(layout.wte), Pf(layout.wpe), Resid(0), size_t(M), t, w);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    const size_t sec = size_t(M) * w;  // one of Q, K, V in qkvh
    for (int l = 0; l < cfg.layers; ++l) {
      const BlockLayout& bl = layout.blocks[l];
      bf16* q = Qkvh(l);
      if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNorm(Resid(l), bl.ln1_gain, bl.ln1_bias, H1(l), Ln1Stats(l), M));
      PERFGATE_RETURN_IF_ERROR(Linear(M, w, 3 * w, H1(l), Wb(bl.qkv), qkv_rows, false));
      if (!plan_only) {
        k::PermuteHeads<<<k::GridFor(3 * sec), k::kThreads, 0, stream>>>(qkv_rows, q, B, t, H, hd, 3, true);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
        if (fill_cache) {
          k::WriteCachePrefill<<<k::GridFor(sec), k::kThreads, 0, stream>>>(
              q + sec, q + 2 * sec, KCache(l), VCache(l), B, H, t, hd, cfg.seq);
          PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
        }
      }
      PERFGATE_RETURN_IF_ERROR(Gemm(ScoresKey(bh, t, hd), q, q + sec, scores, scores, 0.0f));
      if (!plan_only) {
        const size_t rows = size_t(bh) * t;
        k::CausalSoftmaxForward<<<k::RowGrid(rows), k::kThreads, 0, stream>>>(scores, Probs(l), rows, t, scale);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      PERFGATE_RETURN_IF_ERROR(Gemm(ValuesKey(bh, t, hd), Probs(l), q + 2 * sec, heads_tmp, heads_tmp, 0.0f));
      if (!plan_only) {
        k::PermuteHeads<<<k::GridFor(sec), k::kThreads, 0, stream>>>(heads_tmp, Att(l), B, t, H, hd, 1, false);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      PERFGATE_RETURN_IF_ERROR(Linear(M, w, w, Att(l), Wb(bl.proj), Mid(l), true, Resid(l)));
      if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNorm(Mid(l), bl.ln2_gain, bl.ln2_bias, H2(l), Ln2Stats(l), M));
      PERFGATE_RETURN_IF_ERROR(Linear(M, w, 4 * w, H2(l), Wb(bl.fc), U(l), false));
      if (!plan_only) {
        k::GeluForward<<<k::GridFor(size_t(M) * 4 * w), k::kThreads, 0, stream>>>(U(l), G(l), size_t(M) * 4 * w);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      PERFGATE_RETURN_IF_ERROR(Linear(M, 4 * w, w, G(l), Wb(bl.fc_proj), Resid(l + 1), true, Mid(l)));
    }
    if (!plan_only) {
      PERFGATE_RETURN_IF_ERROR(LayerNorm(Resid(cfg.layers), layout.lnf_gain, layout.lnf_bias, lnf_out, lnf_stats, M));
    }
    return absl::OkStatus();
  }

  // The training forward pass of the current batch; the mean loss stays in
  // device memory (`loss`).
  absl::Status EnqueueForward() {
    const int M = batch * seq;
    PERFGATE_RETURN_IF_ERROR(ForwardBody(inputs, batch, seq, false));
    PERFGATE_RETURN_IF_ERROR(Linear(M, cfg.width, cfg.vocab, lnf_out, Wb(layout.wte), logits, true));
    if (plan_only) return absl::OkStatus();
    k::CrossEntropy<<<M, k::kThreads, 0, stream>>>(logits, targets, losses, dlogits, cfg.vocab, 1.0f / M);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    k::MeanLoss<<<1, k::kThreads, 0, stream>>>(losses, M, loss);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

  // ---- backward ----

  // Hands [begin, end) to the reducer once the compute stream has written it.
  absl::Status Reduce(AllReducer* reducer, size_t begin, size_t end, int range) {
    if (reducer == nullptr || plan_only) return absl::OkStatus();
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(ev_ranges[range], stream));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(comm_stream, ev_ranges[range], 0));
    const absl::Status s = reducer->AllReduceSum(grads + begin, end - begin, comm_stream);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("all-reduce of gradients [", begin, ", ", end, "): ", s.message()));
    }
    return absl::OkStatus();
  }

  absl::Status EnqueueBackward(AllReducer* reducer) {
    const int B = batch, t = seq, w = cfg.width, H = cfg.heads, hd = cfg.head_dim();
    const int M = B * t, bh = B * H;
    const float scale = 1.0f / std::sqrt(float(hd));
    const size_t sec = size_t(M) * w;
    // LM head (tied): d wte written here, the embedding's part added at the end.
    PERFGATE_RETURN_IF_ERROR(LinearDw(M, w, cfg.vocab, dlogits, lnf_out, Gr(layout.wte)));
    PERFGATE_RETURN_IF_ERROR(LinearDx(M, w, cfg.vocab, dlogits, Wb(layout.wte), dh));
    if (!plan_only) {
      PERFGATE_RETURN_IF_ERROR(LayerNormGrad(dh, Resid(cfg.layers), lnf_stats, layout.lnf_gain, layout.lnf_bias, M,
                                       false));
    }
    for (int l = cfg.layers - 1; l >= 0; --l) {
      const BlockLayout& bl = layout.blocks[l];
      // MLP: dres holds d(block output).
      PERFGATE_RETURN_IF_ERROR(LinearDw(M, 4 * w, w, dres_bf, G(l), Gr(bl.fc_proj)));
      PERFGATE_RETURN_IF_ERROR(LinearDx(M, 4 * w, w, dres_bf, Wb(bl.fc_proj), dff));
      if (!plan_only) {
        k::GeluBackward<<<k::GridFor(size_t(M) * 4 * w), k::kThreads, 0, stream>>>(U(l), dff, size_t(M) * 4 * w);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      PERFGATE_RETURN_IF_ERROR(LinearDw(M, w, 4 * w, dff, H2(l), Gr(bl.fc)));
      PERFGATE_RETURN_IF_ERROR(LinearDx(M, w, 4 * w, dff, Wb(bl.fc), dh));
      if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNormGrad(dh, Mid(l), Ln2Stats(l), bl.ln2_gain, bl.ln2_bias, M, true));
      // Attention: dres holds d(mid).
      PERFGATE_RETURN_IF_ERROR(LinearDw(M, w, w, dres_bf, Att(l), Gr(bl.proj)));
      PERFGATE_RETURN_IF_ERROR(LinearDx(M, w, w, dres_bf, Wb(bl.proj), dh));
      bf16* q = Qkvh(l);
      bf16* d_o = heads_tmp;  // dO, then dQ, dK, dV in its three sections
      bf16* dq = heads_tmp;
      bf16* dk = heads_tmp + sec;
      bf16* dv = heads_tmp + 2 * sec;
      if (!plan_only) {
        k::PermuteHeads<<<k::GridFor(sec), k::kThreads, 0, stream>>>(dh, d_o, B, t, H, hd, 1, true);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      PERFGATE_RETURN_IF_ERROR(Gemm(ScoresKey(bh, t, hd), d_o, q + 2 * sec, scores, scores, 0.0f));  // dP = dO·Vᵀ
      PERFGATE_RETURN_IF_ERROR(Gemm(ValuesGradKey(bh, t, hd), Probs(l), d_o, dv, dv, 0.0f));        // dV = Pᵀ·dO
      if (!plan_only) {
        const size_t rows = size_t(bh) * t;
        k::CausalSoftmaxBackward<<<k::RowGrid(rows), k::kThreads, 0, stream>>>(Probs(l), scores, rows, t, scale);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      // dS now overwrites P; dQ may overwrite dO, which is no longer read.
      PERFGATE_RETURN_IF_ERROR(Gemm(ValuesKey(bh, t, hd), Probs(l), q + sec, dq, dq, 0.0f));  // dQ = dS·K
      PERFGATE_RETURN_IF_ERROR(Gemm(ValuesGradKey(bh, t, hd), Probs(l), q, dk, dk, 0.0f));    // dK = dSᵀ·Q
      if (!plan_only) {
        k::PermuteHeads<<<k::GridFor(3 * sec), k::kThreads, 0, stream>>>(heads_tmp, qkv_rows, B, t, H, hd, 3,
                                                                         false);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      PERFGATE_RETURN_IF_ERROR(LinearDw(M, w, 3 * w, qkv_rows, H1(l), Gr(bl.qkv)));
      PERFGATE_RETURN_IF_ERROR(LinearDx(M, w, 3 * w, qkv_rows, Wb(bl.qkv), dh));
      if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNormGrad(dh, Resid(l), Ln1Stats(l), bl.ln1_gain, bl.ln1_bias, M, true));
      PERFGATE_RETURN_IF_ERROR(Reduce(reducer, bl.begin, bl.end, l));
    }
    if (plan_only) return absl::OkStatus();
    // Embeddings: dres holds d(x0).
    k::EmbedBackwardWte<<<k::GridFor(sec), k::kThreads, 0, stream>>>(inputs, dres, Gr(layout.wte), size_t(M), w);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    k::EmbedBackwardWpe<<<k::GridFor(size_t(cfg.seq) * w), k::kThreads, 0, stream>>>(dres, Gr(layout.wpe), B, t,
                                                                                     cfg.seq, w);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    if (reducer != nullptr) {
      PERFGATE_RETURN_IF_ERROR(Reduce(reducer, 0, layout.blocks[0].begin, cfg.layers));
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(ev_comm, comm_stream));
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(stream, ev_comm, 0));
      k::Scale<<<k::GridFor(layout.total), k::kThreads, 0, stream>>>(grads, layout.total,
                                                                    1.0f / float(reducer->ranks()));
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    return absl::OkStatus();
  }

  absl::Status EnqueueStep(const AdamW& hp) {
    ++adam_t;
    k::AdamWArgs a{hp.lr, hp.beta1, hp.beta2, hp.eps, hp.weight_decay,
                   1.0f - std::pow(hp.beta1, float(adam_t)), 1.0f - std::pow(hp.beta2, float(adam_t))};
    k::AdamW<<<k::GridFor(layout.total), k::kThreads, 0, stream>>>(params, grads, m, v, params_bf, layout.total,
                                                                   a, decay);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

  // ---- planning: every GEMM shape of a pass, created before it runs ----

  absl::Status PlanTraining() {
    plan_only = true;
    absl::Status e = EnqueueForward();
    if (e.ok()) e.Update(EnqueueBackward(nullptr));
    plan_only = false;
    return e;
  }

  absl::Status PlanPrefill(int B, int len) {
    plan_only = true;
    absl::Status e = ForwardBody(prompt, B, len, true);
    if (e.ok()) e.Update(EnqueueDecodeStep(B));
    plan_only = false;
    return e;
  }

  // ---- inference ----

  // The logits of dec_h's rows [B, w] (lnf applied), their argmax logged.
  absl::Status LogitsAndArgmax(int B) {
    PERFGATE_RETURN_IF_ERROR(Linear(B, cfg.width, cfg.vocab, dec_h, Wb(layout.wte), dec_logits, true));
    if (plan_only) return absl::OkStatus();
    k::ArgmaxTokens<<<B, k::kThreads, 0, stream>>>(dec_logits, cfg.vocab, dec_next, dec_log, dec_step, max_steps);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

  // One greedy decode step of B sequences: dec_next at *dec_pos in, the
  // argmax out into dec_next and the log; then the position advances.
  absl::Status EnqueueDecodeStep(int B) {
    const int w = cfg.width, H = cfg.heads, hd = cfg.head_dim();
    const float scale = 1.0f / std::sqrt(float(hd));
    if (!plan_only) {
      k::EmbedDecode<<<k::GridFor(size_t(B) * w), k::kThreads, 0, stream>>>(dec_next, dec_pos, Pf(layout.wte),
                                                                          Pf(layout.wpe), dec_x, B, w);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    for (int l = 0; l < cfg.layers; ++l) {
      const BlockLayout& bl = layout.blocks[l];
      if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNorm(dec_x, bl.ln1_gain, bl.ln1_bias, dec_h, nullptr, B));
      PERFGATE_RETURN_IF_ERROR(Linear(B, w, 3 * w, dec_h, Wb(bl.qkv), dec_qkv, false));
      if (!plan_only) {
        k::WriteCacheDecode<<<k::GridFor(size_t(B) * w), k::kThreads, 0, stream>>>(dec_qkv, dec_pos, KCache(l),
                                                                                 VCache(l), B, H, hd, cfg.seq);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
        const size_t shared = (size_t(cfg.seq) + hd) * sizeof(float);
        k::DecodeAttention<<<B * H, k::kThreads, shared, stream>>>(dec_qkv, KCache(l), VCache(l), dec_pos, dec_o,
                                                                   H, hd, cfg.seq, scale);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      PERFGATE_RETURN_IF_ERROR(Linear(B, w, w, dec_o, Wb(bl.proj), dec_x, true, dec_x));
      if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNorm(dec_x, bl.ln2_gain, bl.ln2_bias, dec_h, nullptr, B));
      PERFGATE_RETURN_IF_ERROR(Linear(B, w, 4 * w, dec_h, Wb(bl.fc), dec_u, false));
      if (!plan_only) {
        k::GeluForward<<<k::GridFor(size_t(B) * 4 * w), k::kThreads, 0, stream>>>(dec_u, dec_g, size_t(B) * 4 * w);
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      PERFGATE_RETURN_IF_ERROR(Linear(B, 4 * w, w, dec_g, Wb(bl.fc_proj), dec_x, true, dec_x));
    }
    if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNorm(dec_x, layout.lnf_gain, layout.lnf_bias, dec_h, nullptr, B));
    PERFGATE_RETURN_IF_ERROR(LogitsAndArgmax(B));
    if (plan_only) return absl::OkStatus();
    k::AdvanceDecode<<<1, 1, 0, stream>>>(dec_pos, dec_step);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return absl::OkStatus();
  }

  // The prompt (already in `prompt`) through the model: cache filled, the
  // last position's logits in dec_logits, their argmax the first token.
  absl::Status EnqueuePrefill() {
    const int B = pre_batch, len = pre_len;
    PERFGATE_RETURN_IF_ERROR(ForwardBody(prompt, B, len, true));
    k::GatherLast<<<k::GridFor(size_t(B) * cfg.width), k::kThreads, 0, stream>>>(lnf_out, dec_h, B, len,
                                                                               cfg.width);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dec_step, 0, sizeof(int), stream));
    PERFGATE_RETURN_IF_ERROR(LogitsAndArgmax(B));
    k::StartDecode<<<1, 32, 0, stream>>>(dec_pos, dec_step, dec_next, dec_first, len, B);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    host_pos = len;
    host_step = 1;
    forward_done = false;  // the training activations were overwritten
    return absl::OkStatus();
  }

  absl::Status EnqueueRewind() {
    k::RewindDecode<<<1, 32, 0, stream>>>(dec_pos, dec_step, dec_next, dec_first, pre_len, pre_batch);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    host_pos = pre_len;
    host_step = 1;
    return absl::OkStatus();
  }

  // Captures one decode step of the prefill's batch as a graph.
  absl::Status Capture() {
    if (graph != nullptr) return absl::OkStatus();
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    const absl::Status e = EnqueueDecodeStep(pre_batch);
    cudaGraph_t g = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream, &g);
    if (!e.ok()) {
      if (g != nullptr) cudaGraphDestroy(g);
      return e;
    }
    if (end != cudaSuccess) return perfgate::cuda::CudaError(end, "cudaStreamEndCapture", __FILE__, __LINE__);
    const cudaError_t inst = cudaGraphInstantiate(&graph, g, 0);
    cudaGraphDestroy(g);
    if (inst != cudaSuccess) {
      graph = nullptr;
      return perfgate::cuda::CudaError(inst, "cudaGraphInstantiate", __FILE__, __LINE__);
    }
    return absl::OkStatus();
  }

  // `steps` decode steps, replayed from the graph or launched eagerly.
  absl::Status Decode(int steps, bool use_graph) {
    PERFGATE_RETURN_IF_ERROR(NeedsPrefill("decode"));
    if (host_pos + steps > cfg.seq) {
      return absl::InvalidArgumentError(absl::StrCat("decode past the model's ", cfg.seq, " positions (at ",
                                                     host_pos, ", ", steps, " more asked)"));
    }
    if (use_graph) PERFGATE_RETURN_IF_ERROR(Capture());
    for (int i = 0; i < steps; ++i) {
      if (use_graph) {
        PERFGATE_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph, stream));
      } else {
        PERFGATE_RETURN_IF_ERROR(EnqueueDecodeStep(pre_batch));
      }
    }
    host_pos += steps;
    host_step += steps;
    return absl::OkStatus();
  }

  // Seconds between ev_start and ev_stop, once ev_stop has happened.
  absl::StatusOr<double> Elapsed() {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(ev_stop));
    float ms = 0.0f;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, ev_start, ev_stop));
    return double(ms) / 1e3;
  }

  // A copy of `total` fp32 values of device memory at `src` (synchronises).
  absl::StatusOr<std::vector<float>> Download(const float* src) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    std::vector<float> out(layout.total);
    PERFGATE_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(out.data(), src, out.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return out;
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

  // Loads every kernel the decode graph launches, so none loads lazily
  // while a stream is being captured.
  absl::Status PreloadKernels() {
    cudaFuncAttributes attr;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, k::EmbedDecode));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, k::LayerNormForward));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, k::WriteCacheDecode));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, k::DecodeAttention));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, k::GeluForward));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, k::ArgmaxTokens));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, k::AdvanceDecode));
    return absl::OkStatus();
  }

  absl::Status Init(const std::vector<float>& host_params) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    align_bf16 = AlignmentOf(2 * W());
    align_f32 = AlignmentOf(4 * W());
    max_steps = cfg.seq + 1;
    const BlockLayout& b0 = layout.blocks[0];
    decay.embed_matrices = layout.wte.size() + layout.wpe.size();
    decay.blocks_begin = b0.begin;
    decay.block_size = b0.end - b0.begin;
    decay.norm_pair = 2 * W();
    decay.ln2_offset = b0.ln2_gain.offset - b0.begin;

    arena_bytes = Carve(0);
    size_t free_bytes = 0, total_bytes = 0;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (arena_bytes + kHeadroomBytes > free_bytes) {
      return absl::UnavailableError(absl::StrFormat(
          "the model needs %.2f GiB on device %d, %.2f GiB free",
          double(arena_bytes + kHeadroomBytes) / double(1u << 30), device, double(free_bytes) / double(1u << 30)));
    }
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMalloc(&arena, arena_bytes));
    Carve(reinterpret_cast<uintptr_t>(arena));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&comm_stream, cudaStreamNonBlocking));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&ev_start));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&ev_stop));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&ev_comm, cudaEventDisableTiming));
    ev_ranges.assign(size_t(cfg.layers) + 1, nullptr);
    for (cudaEvent_t& e : ev_ranges) PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->Create(&handle));
    PERFGATE_RETURN_IF_ERROR(PreloadKernels());

    const size_t total = layout.total;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(params, host_params.data(), total * sizeof(float),
                                        cudaMemcpyHostToDevice, stream));
    if (!inference) {
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(grads, 0, total * sizeof(float), stream));
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(m, 0, total * sizeof(float), stream));
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(v, 0, total * sizeof(float), stream));
    }
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dec_pos, 0, sizeof(int), stream));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dec_step, 0, sizeof(int), stream));
    k::ToBf16<<<k::GridFor(total), k::kThreads, 0, stream>>>(params, params_bf, total);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));

    // The full-size shapes, planned now; smaller batches plan in SetBatch
    // and Prefill.
    batch = cfg.batch;
    seq = cfg.seq;
    PERFGATE_RETURN_IF_ERROR(PlanTraining());
    PERFGATE_RETURN_IF_ERROR(PlanPrefill(cfg.batch, cfg.seq));
    return absl::OkStatus();
  }
};

CudaModel::CudaModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaModel::~CudaModel() = default;

absl::StatusOr<std::unique_ptr<CudaModel>> CudaModel::Create(const Config& config,
                                                            const std::vector<float>& params, int device) {
  return CreateImpl(config, params, device, false);
}

absl::StatusOr<std::unique_ptr<CudaModel>> CudaModel::CreateForInference(const Config& config,
                                                                        const std::vector<float>& params,
                                                                        int device) {
  return CreateImpl(config, params, device, true);
}

absl::StatusOr<std::unique_ptr<CudaModel>> CudaModel::CreateImpl(const Config& config,
                                                                const std::vector<float>& params, int device,
                                                                bool inference) {
  const std::string invalid = Validate(config);
  if (!invalid.empty()) return absl::InvalidArgumentError("invalid model configuration: " + invalid);
  const absl::StatusOr<int> devices = perfgate::cuda::VisibleDevices();
  if (!devices.ok()) return devices.status();
  if (device < 0 || device >= *devices) {
    return absl::UnavailableError(
        absl::StrCat("device ", device, " is not one of the ", *devices, " visible"));
  }
  // A machine without cuBLASLt cannot run the model: skip, not fail.
  auto lt = perfgate::cuda::LoadCublasLt();
  if (!lt.ok()) return absl::UnavailableError(lt.status().message());
  auto impl = std::make_unique<Impl>();
  impl->cfg = config;
  impl->layout = MakeLayout(config);
  impl->device = device;
  impl->inference = inference;
  impl->lt_ = *lt;
  if (params.size() != impl->layout.total) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", impl->layout.total, " parameters, got ", params.size()));
  }
  PERFGATE_RETURN_IF_ERROR(impl->Init(params));
  return std::unique_ptr<CudaModel>(new CudaModel(std::move(impl)));
}

const Config& CudaModel::config() const { return impl_->cfg; }

void* CudaModel::stream() const { return impl_->stream; }

absl::Status CudaModel::SetBatch(const int32_t* inputs, const int32_t* targets, int batch, int seq) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  if (batch <= 0 || batch > m.cfg.batch || seq <= 0 || seq > m.cfg.seq) {
    return absl::InvalidArgumentError(absl::StrCat("batch ", batch, " × seq ", seq, " exceeds the model's ",
                                                   m.cfg.batch, " × ", m.cfg.seq));
  }
  const size_t n = size_t(batch) * seq;
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i] < 0 || inputs[i] >= m.cfg.vocab || targets[i] < 0 || targets[i] >= m.cfg.vocab) {
      return absl::InvalidArgumentError(absl::StrCat("token ", i, " is outside the vocabulary"));
    }
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(m.inputs, inputs, n * sizeof(int32_t), cudaMemcpyHostToDevice, m.stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(m.targets, targets, n * sizeof(int32_t), cudaMemcpyHostToDevice, m.stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  m.batch = batch;
  m.seq = seq;
  m.forward_done = false;
  return m.PlanTraining();
}

absl::StatusOr<float> CudaModel::Forward() {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_RETURN_IF_ERROR(m.EnqueueForward());
  m.forward_done = true;
  float loss = 0;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(&loss, m.loss, sizeof(float), cudaMemcpyDeviceToHost, m.stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  return loss;
}

absl::Status CudaModel::Backward(AllReducer* reducer) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  if (!m.forward_done) return absl::InternalError("Backward needs a Forward of the current batch first");
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  return m.EnqueueBackward(reducer);
}

absl::Status CudaModel::Step(const AdamW& hp) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  return m.EnqueueStep(hp);
}

absl::StatusOr<double> CudaModel::TimedTrainStep(const AdamW& hp, AllReducer* reducer) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_start, m.stream));
  PERFGATE_RETURN_IF_ERROR(m.EnqueueForward());
  m.forward_done = true;
  PERFGATE_RETURN_IF_ERROR(m.EnqueueBackward(reducer));
  PERFGATE_RETURN_IF_ERROR(m.EnqueueStep(hp));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_stop, m.stream));
  return m.Elapsed();
}

absl::StatusOr<std::vector<float>> CudaModel::DownloadParams() const {
  return impl_->Download(impl_->params);
}

absl::StatusOr<std::vector<float>> CudaModel::DownloadGrads() const {
  PERFGATE_RETURN_IF_ERROR(impl_->NeedsTraining());
  return impl_->Download(impl_->grads);
}

absl::Status CudaModel::Prefill(const int32_t* prompt, int batch, int prompt_len, std::vector<float>* logits) {
  Impl& m = *impl_;
  if (batch <= 0 || batch > m.cfg.batch || prompt_len <= 0 || prompt_len > m.cfg.seq) {
    return absl::InvalidArgumentError(absl::StrCat("prompt of batch ", batch, " × ", prompt_len,
                                                   " exceeds the model's ", m.cfg.batch, " × ", m.cfg.seq));
  }
  const size_t n = size_t(batch) * prompt_len;
  for (size_t i = 0; i < n; ++i) {
    if (prompt[i] < 0 || prompt[i] >= m.cfg.vocab) {
      return absl::InvalidArgumentError(absl::StrCat("prompt token ", i, " is outside the vocabulary"));
    }
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(m.prompt, prompt, n * sizeof(int32_t), cudaMemcpyHostToDevice, m.stream));
  if (batch != m.pre_batch && m.graph != nullptr) {  // the graph is of one batch size
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGraphExecDestroy(m.graph));
    m.graph = nullptr;
  }
  m.pre_batch = batch;
  m.pre_len = prompt_len;
  PERFGATE_RETURN_IF_ERROR(m.PlanPrefill(batch, prompt_len));
  PERFGATE_RETURN_IF_ERROR(m.EnqueuePrefill());
  if (logits != nullptr) {
    logits->resize(size_t(batch) * m.cfg.vocab);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(logits->data(), m.dec_logits, logits->size() * sizeof(float),
                                                  cudaMemcpyDeviceToHost, m.stream));
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  return absl::OkStatus();
}

absl::StatusOr<double> CudaModel::TimedPrefill() {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsPrefill("TimedPrefill"));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_start, m.stream));
  PERFGATE_RETURN_IF_ERROR(m.EnqueuePrefill());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_stop, m.stream));
  return m.Elapsed();
}

absl::StatusOr<std::vector<int32_t>> CudaModel::Greedy(int steps, bool use_graph) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsPrefill("Greedy"));
  if (steps < 1) return absl::InvalidArgumentError("Greedy needs at least one step");
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  // From the prompt: token 0 is the prefill's argmax, each later one the
  // argmax of a decode step fed the token before (HostModel::Greedy).
  PERFGATE_RETURN_IF_ERROR(m.EnqueueRewind());
  PERFGATE_RETURN_IF_ERROR(m.Decode(steps - 1, use_graph));
  std::vector<int32_t> log(size_t(m.pre_batch) * m.max_steps);
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(log.data(), m.dec_log, log.size() * sizeof(int32_t), cudaMemcpyDeviceToHost, m.stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  std::vector<int32_t> tokens(size_t(m.pre_batch) * steps);
  for (int b = 0; b < m.pre_batch; ++b) {
    std::copy_n(log.begin() + size_t(b) * m.max_steps, steps, tokens.begin() + size_t(b) * steps);
  }
  return tokens;
}

absl::Status CudaModel::RewindToPrompt() {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsPrefill("RewindToPrompt"));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_RETURN_IF_ERROR(m.EnqueueRewind());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  return absl::OkStatus();
}

absl::StatusOr<double> CudaModel::TimedDecode(int steps) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsPrefill("TimedDecode"));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_RETURN_IF_ERROR(m.Capture());  // outside the timed region
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_start, m.stream));
  PERFGATE_RETURN_IF_ERROR(m.Decode(steps, true));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_stop, m.stream));
  return m.Elapsed();
}

}  // namespace perfgate::suites::model::cuda
