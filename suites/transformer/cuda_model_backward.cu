// The backward pass, blocks last to first, each range of gradients handed
// to the all-reducer (on the communication stream) as soon as the compute
// stream has written it, and the AdamW step.
#include <cuda_runtime.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "suites/cuda/check.h"
#include "suites/transformer/cuda_model_impl.cuh"

namespace perfgate::suites::transformer::cuda {

// Gradients of a LayerNorm: into the residual gradient (added or not) and
// its bf16 copy, and the gain and bias gradients (written).
absl::Status CudaModel::Impl::LayerNormGrad(const bf16* dy, const float* x, const float* stats,
                                            const Tensor& gain, const Tensor& bias, int rows,
                                            bool accumulate) {
  const int w = cfg.width;
  k::LayerNormBackward<<<k::RowGrid(rows), k::kThreads, 0, stream>>>(dy, x, stats, stats + T(), Pf(gain),
                                                                     dres, dres_bf, rows, w, accumulate);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  const int chunks = (rows + kLnChunkRows - 1) / kLnChunkRows;
  k::LayerNormParamPartials<<<dim3((w + 31) / 32, chunks), dim3(32, 8), 0, stream>>>(
      dy, x, stats, stats + T(), ln_part_gain, ln_part_bias, rows, w, kLnChunkRows);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  k::LayerNormParamFinish<<<k::GridFor(w), k::kThreads, 0, stream>>>(ln_part_gain, ln_part_bias, chunks, w,
                                                                     Gr(gain), Gr(bias));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// Hands [begin, end) to the reducer once the compute stream has written it.
absl::Status CudaModel::Impl::Reduce(AllReducer* reducer, size_t begin, size_t end, int range) {
  if (reducer == nullptr || plan_only) return absl::OkStatus();
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(ev_ranges[range], stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(comm_stream, ev_ranges[range], 0));
  const absl::Status s = reducer->AllReduceSum(grads + begin, end - begin, comm_stream);
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrCat("all-reduce of gradients [", begin, ", ", end, "): ", s.message()));
  }
  return absl::OkStatus();
}

// The MLP of block l backwards; dres holds d(block output), and leaves with
// d(mid) added.
absl::Status CudaModel::Impl::MlpBackward(int l) {
  const int w = cfg.width, M = batch * seq;
  const BlockLayout& bl = layout.blocks[l];
  PERFGATE_RETURN_IF_ERROR(LinearDw(M, 4 * w, w, dres_bf, G(l), Gr(bl.fc_proj)));
  PERFGATE_RETURN_IF_ERROR(LinearDx(M, 4 * w, w, dres_bf, Wb(bl.fc_proj), dff));
  if (!plan_only) {
    k::GeluBackward<<<k::GridFor(size_t(M) * 4 * w), k::kThreads, 0, stream>>>(U(l), dff, size_t(M) * 4 * w);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  }
  PERFGATE_RETURN_IF_ERROR(LinearDw(M, w, 4 * w, dff, H2(l), Gr(bl.fc)));
  PERFGATE_RETURN_IF_ERROR(LinearDx(M, w, 4 * w, dff, Wb(bl.fc), dh));
  if (!plan_only) {
    PERFGATE_RETURN_IF_ERROR(LayerNormGrad(dh, Mid(l), Ln2Stats(l), bl.ln2_gain, bl.ln2_bias, M, true));
  }
  return absl::OkStatus();
}

// The attention of block l backwards; dres holds d(mid), and leaves with
// d(block input) added.
absl::Status CudaModel::Impl::AttentionBackward(int l) {
  const int B = batch, t = seq, w = cfg.width, H = cfg.heads, hd = cfg.head_dim();
  const int M = B * t, bh = B * H;
  const float scale = 1.0f / std::sqrt(float(hd));
  const size_t sec = size_t(M) * w;
  const BlockLayout& bl = layout.blocks[l];
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
  PERFGATE_RETURN_IF_ERROR(Gemm(ValuesGradKey(bh, t, hd), Probs(l), d_o, dv, dv, 0.0f));  // dV = Pᵀ·dO
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
  if (!plan_only) {
    PERFGATE_RETURN_IF_ERROR(LayerNormGrad(dh, Resid(l), Ln1Stats(l), bl.ln1_gain, bl.ln1_bias, M, true));
  }
  return absl::OkStatus();
}

absl::Status CudaModel::Impl::EnqueueBackward(AllReducer* reducer) {
  const int B = batch, t = seq, w = cfg.width, M = B * t;
  // LM head (tied): d wte written here, the embedding's part added at the end.
  PERFGATE_RETURN_IF_ERROR(LinearDw(M, w, cfg.vocab, dlogits, lnf_out, Gr(layout.wte)));
  PERFGATE_RETURN_IF_ERROR(LinearDx(M, w, cfg.vocab, dlogits, Wb(layout.wte), dh));
  if (!plan_only) {
    PERFGATE_RETURN_IF_ERROR(
        LayerNormGrad(dh, Resid(cfg.layers), lnf_stats, layout.lnf_gain, layout.lnf_bias, M, false));
  }
  for (int l = cfg.layers - 1; l >= 0; --l) {
    PERFGATE_RETURN_IF_ERROR(MlpBackward(l));
    PERFGATE_RETURN_IF_ERROR(AttentionBackward(l));
    PERFGATE_RETURN_IF_ERROR(Reduce(reducer, layout.blocks[l].begin, layout.blocks[l].end, l));
  }
  if (plan_only) return absl::OkStatus();
  // Embeddings: dres holds d(x0).
  k::EmbedBackwardWte<<<k::GridFor(size_t(M) * w), k::kThreads, 0, stream>>>(inputs, dres, Gr(layout.wte),
                                                                             size_t(M), w);
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

absl::Status CudaModel::Impl::EnqueueStep(const AdamW& hp) {
  ++adam_t;
  const float c1 = 1.0f - std::pow(hp.beta1, float(adam_t)), c2 = 1.0f - std::pow(hp.beta2, float(adam_t));
  const k::AdamWArgs a{hp.lr, hp.beta1, hp.beta2, hp.eps, hp.weight_decay, c1, c2};
  k::AdamW<<<k::GridFor(layout.total), k::kThreads, 0, stream>>>(params, grads, m, v, params_bf, layout.total,
                                                                 a, decay);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

}  // namespace perfgate::suites::transformer::cuda
