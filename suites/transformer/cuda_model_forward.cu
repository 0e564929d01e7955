// The forward pass: the embedding, every block (LayerNorm, the fused QKV
// projection, causal attention as strided-batched products, the output
// projection with the residual add as its epilogue, the MLP likewise), the
// final LayerNorm, the LM head and the loss. Prefill runs the same body and
// fills the KV cache on the way.
#include <cuda_runtime.h>

#include <cmath>

#include "suites/cuda/check.h"
#include "suites/transformer/cuda_model_impl.cuh"

namespace perfgate::suites::transformer::cuda {

// The bf16 LayerNorm of `rows` fp32 rows; their mean and rstd into `stats`
// ([2][T]) when it is not null.
absl::Status CudaModel::Impl::LayerNorm(const float* x, const Tensor& gain, const Tensor& bias, bf16* y,
                                        float* stats, int rows) {
  k::LayerNormForward<<<k::RowGrid(rows), k::kThreads, 0, stream>>>(
      x, Pf(gain), Pf(bias), y, stats, stats == nullptr ? nullptr : stats + T(), rows, cfg.width);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// Embedding, blocks and the final LayerNorm over `tokens` (B × t); with
// `fill_cache`, also the KV cache for positions [0, t).
absl::Status CudaModel::Impl::ForwardBody(const int32_t* tokens, int B, int t, bool fill_cache) {
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
    if (!plan_only) {
      PERFGATE_RETURN_IF_ERROR(LayerNorm(Resid(l), bl.ln1_gain, bl.ln1_bias, H1(l), Ln1Stats(l), M));
    }
    PERFGATE_RETURN_IF_ERROR(Linear(M, w, 3 * w, H1(l), Wb(bl.qkv), qkv_rows, false));
    if (!plan_only) {
      k::PermuteHeads<<<k::GridFor(3 * sec), k::kThreads, 0, stream>>>(qkv_rows, q, B, t, H, hd, 3, true);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      if (fill_cache) {
        k::WriteCachePrefill<<<k::GridFor(sec), k::kThreads, 0, stream>>>(q + sec, q + 2 * sec, KCache(l),
                                                                          VCache(l), B, H, t, hd, cfg.seq);
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
    if (!plan_only) {
      PERFGATE_RETURN_IF_ERROR(LayerNorm(Mid(l), bl.ln2_gain, bl.ln2_bias, H2(l), Ln2Stats(l), M));
    }
    PERFGATE_RETURN_IF_ERROR(Linear(M, w, 4 * w, H2(l), Wb(bl.fc), U(l), false));
    if (!plan_only) {
      k::GeluForward<<<k::GridFor(size_t(M) * 4 * w), k::kThreads, 0, stream>>>(U(l), G(l),
                                                                                size_t(M) * 4 * w);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    PERFGATE_RETURN_IF_ERROR(Linear(M, 4 * w, w, G(l), Wb(bl.fc_proj), Resid(l + 1), true, Mid(l)));
  }
  if (!plan_only) {
    PERFGATE_RETURN_IF_ERROR(
        LayerNorm(Resid(cfg.layers), layout.lnf_gain, layout.lnf_bias, lnf_out, lnf_stats, M));
  }
  return absl::OkStatus();
}

// The training forward pass of the current batch; the mean loss stays in
// device memory (`loss`).
absl::Status CudaModel::Impl::EnqueueForward() {
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

}  // namespace perfgate::suites::transformer::cuda
