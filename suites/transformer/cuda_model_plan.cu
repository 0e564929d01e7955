// The CUDA backend's set-up and teardown: every device buffer carved from
// one allocation, the streams and events, and the cuBLASLt plans of every
// GEMM shape a pass runs, created before the pass runs so that nothing is
// chosen or allocated during a step.
//
// Row-major products on column-major cuBLASLt: a row-major [r, c] matrix is
// the column-major [c, r] one, so C = op(A)·op(B) (row-major) is computed as
// Cᵀ = op(B)ᵀ·op(A)ᵀ, i.e. cuBLASLt's A is our B and its B is our A.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "suites/cuda/check.h"
#include "suites/transformer/cuda_model_impl.cuh"

namespace perfgate::suites::transformer::cuda {
namespace {

// Room left for the context, cuBLASLt's own state and graphs.
constexpr size_t kHeadroomBytes = 256u << 20;

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

// Every device buffer, from one allocation at `base` (0: measure only).
size_t CudaModel::Impl::Carve(uintptr_t base) {
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
  c.Take(&slot_rows, 3 * t + B);
  return c.used();
}

absl::Status CudaModel::Impl::Init(const std::vector<float>& host_params) {
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
    return absl::UnavailableError(absl::StrFormat("the model needs %.2f GiB on device %d, %.2f GiB free",
                                                  double(arena_bytes + kHeadroomBytes) / double(1u << 30),
                                                  device, double(free_bytes) / double(1u << 30)));
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMalloc(&arena, arena_bytes));
  Carve(reinterpret_cast<uintptr_t>(arena));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&comm_stream, cudaStreamNonBlocking));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&ev_start));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&ev_stop));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&ev_comm, cudaEventDisableTiming));
  ev_ranges.assign(size_t(cfg.layers) + 1, nullptr);
  for (cudaEvent_t& e : ev_ranges) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }

  PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->Create(&handle));
  PERFGATE_RETURN_IF_ERROR(PreloadKernels());

  const size_t total = layout.total;
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(params, host_params.data(), total * sizeof(float), cudaMemcpyHostToDevice, stream));
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

CudaModel::Impl::~Impl() {
  // Teardown errors have nowhere to go.
  if (stream != nullptr) cudaStreamSynchronize(stream);
  if (comm_stream != nullptr) cudaStreamSynchronize(comm_stream);
  if (graph != nullptr) cudaGraphExecDestroy(graph);
  if (lt_ != nullptr) {
    for (auto& [key, p] : plans) DestroyPlan(p);
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

void CudaModel::Impl::DestroyPlan(const GemmPlan& p) const {
  if (p.a != nullptr) lt_->MatrixLayoutDestroy(p.a);
  if (p.b != nullptr) lt_->MatrixLayoutDestroy(p.b);
  if (p.c != nullptr) lt_->MatrixLayoutDestroy(p.c);
  if (p.desc != nullptr) lt_->MatmulDescDestroy(p.desc);
}

absl::Status CudaModel::Impl::MakeLayout(cublasLtMatrixLayout_t* out, cudaDataType_t type, uint64_t rows,
                                         uint64_t cols, int64_t ld, int batch, int64_t stride) {
  PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatrixLayoutCreate(out, type, rows, cols, ld));
  if (batch > 1) {
    const int32_t count = batch;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(
        lt_->MatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatrixLayoutSetAttribute(
        *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
  }
  return absl::OkStatus();
}

absl::Status CudaModel::Impl::CreatePlan(const GemmKey& key, GemmPlan* p) {
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
  PERFGATE_RETURN_IF_ERROR(
      MakeLayout(&p->c, key.c_fp32 ? CUDA_R_32F : CUDA_R_16BF, n, m, int64_t(n), key.batch, key.sc));
  cublasLtMatmulPreference_t pf = nullptr;
  PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->MatmulPreferenceCreate(&pf));
  const absl::Status chosen = ChooseAlgorithm(key, pf, p);
  lt_->MatmulPreferenceDestroy(pf);
  return chosen;
}

// The heuristic's first algorithm for `key` under preference `pf` (the
// workspace and the operands' alignments) into p->algo.
absl::Status CudaModel::Impl::ChooseAlgorithm(const GemmKey& key, cublasLtMatmulPreference_t pf,
                                              GemmPlan* p) {
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
    return perfgate::cuda::InternalErrorAt(__FILE__, __LINE__,
                                           absl::StrCat("cuBLASLt offers no bf16 algorithm for m=", key.m,
                                                        " n=", key.n, " k=", key.k, " batch=", key.batch));
  }
  p->algo = result.algo;
  return absl::OkStatus();
}

// D = alpha·op_a(A)·op_b(B) + beta·C (row-major; C and D share a layout and
// may be the same buffer). Plans are cached per key; in plan_only mode
// this only makes sure the plan exists.
absl::Status CudaModel::Impl::Gemm(const GemmKey& key, const bf16* a, const bf16* b, const void* c, void* d,
                                   float beta) {
  auto it = plans.find(key);
  if (it == plans.end()) {
    GemmPlan p;
    const absl::Status e = CreatePlan(key, &p);
    if (!e.ok()) {
      DestroyPlan(p);
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
  PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_->Matmul(handle, p.desc, &alpha, b, p.a, a, p.b, &beta, c, p.c, d, p.c,
                                              &p.algo, workspace, kWorkspaceBytes, stream));
  return absl::OkStatus();
}

// y[M, out] = x[M, in]·Wᵀ (W [out, in]); with an fp32 `residual`,
// y = residual + x·Wᵀ (residual may be y itself).
absl::Status CudaModel::Impl::Linear(int M, int in, int out, const bf16* x, const bf16* w, void* y,
                                     bool y_fp32, const float* residual) {
  GemmKey key{M, out, in, false, true, 1, 0, 0, 0, y_fp32};
  return Gemm(key, x, w, residual != nullptr ? static_cast<const void*>(residual) : y, y,
              residual != nullptr ? 1.0f : 0.0f);
}

// dX[M, in] = dY[M, out]·W (bf16).
absl::Status CudaModel::Impl::LinearDx(int M, int in, int out, const bf16* dy, const bf16* w, bf16* dx) {
  GemmKey key{M, in, out, false, false, 1, 0, 0, 0, false};
  return Gemm(key, dy, w, dx, dx, 0.0f);
}

// dW[out, in] = dYᵀ·X (fp32, overwriting the gradient).
absl::Status CudaModel::Impl::LinearDw(int M, int in, int out, const bf16* dy, const bf16* x, float* dw) {
  GemmKey key{out, in, M, true, false, 1, 0, 0, 0, true};
  return Gemm(key, dy, x, dw, dw, 0.0f);
}

absl::Status CudaModel::Impl::PlanTraining() {
  plan_only = true;
  absl::Status e = EnqueueForward();
  if (e.ok()) e.Update(EnqueueBackward(nullptr));
  plan_only = false;
  return e;
}

absl::Status CudaModel::Impl::PlanPrefill(int B, int len) {
  plan_only = true;
  absl::Status e = ForwardBody(prompt, B, len, true);
  if (e.ok()) e.Update(EnqueueDecodeStep(B));
  plan_only = false;
  return e;
}

// Seconds between ev_start and ev_stop, once ev_stop has happened.
absl::StatusOr<double> CudaModel::Impl::Elapsed() {
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(ev_stop));
  float ms = 0.0f;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, ev_start, ev_stop));
  return double(ms) / 1e3;
}

// A copy of `total` fp32 values of device memory at `src` (synchronises).
absl::StatusOr<std::vector<float>> CudaModel::Impl::Download(const float* src) {
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  std::vector<float> out(layout.total);
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(out.data(), src, out.size() * sizeof(float), cudaMemcpyDeviceToHost, stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace perfgate::suites::transformer::cuda
