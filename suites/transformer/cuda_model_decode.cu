// Inference: the prefill of a prompt, and greedy decode steps whose
// position lives in device memory, so that one step is captured once as a
// CUDA graph and replayed.
#include <cuda_runtime.h>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "suites/cuda/check.h"
#include "suites/transformer/cuda_model_impl.cuh"

namespace perfgate::suites::transformer::cuda {

// Loads every kernel the decode graph launches, so none loads lazily
// while a stream is being captured.
absl::Status CudaModel::Impl::PreloadKernels() {
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

// The logits of dec_h's rows [B, w] (lnf applied), their argmax logged.
absl::Status CudaModel::Impl::LogitsAndArgmax(int B) {
  PERFGATE_RETURN_IF_ERROR(Linear(B, cfg.width, cfg.vocab, dec_h, Wb(layout.wte), dec_logits, true));
  if (plan_only) return absl::OkStatus();
  k::ArgmaxTokens<<<B, k::kThreads, 0, stream>>>(dec_logits, cfg.vocab, dec_next, dec_log, dec_step,
                                                 max_steps);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// One greedy decode step of B sequences: dec_next at *dec_pos in, the
// argmax out into dec_next and the log; then the position advances.
absl::Status CudaModel::Impl::EnqueueDecodeStep(int B) {
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
      k::WriteCacheDecode<<<k::GridFor(size_t(B) * w), k::kThreads, 0, stream>>>(
          dec_qkv, dec_pos, KCache(l), VCache(l), B, H, hd, cfg.seq);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      const size_t shared = (size_t(cfg.seq) + hd) * sizeof(float);
      k::DecodeAttention<<<B * H, k::kThreads, shared, stream>>>(dec_qkv, KCache(l), VCache(l), dec_pos,
                                                                 dec_o, H, hd, cfg.seq, scale);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    PERFGATE_RETURN_IF_ERROR(Linear(B, w, w, dec_o, Wb(bl.proj), dec_x, true, dec_x));
    if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNorm(dec_x, bl.ln2_gain, bl.ln2_bias, dec_h, nullptr, B));
    PERFGATE_RETURN_IF_ERROR(Linear(B, w, 4 * w, dec_h, Wb(bl.fc), dec_u, false));
    if (!plan_only) {
      k::GeluForward<<<k::GridFor(size_t(B) * 4 * w), k::kThreads, 0, stream>>>(dec_u, dec_g,
                                                                                size_t(B) * 4 * w);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    PERFGATE_RETURN_IF_ERROR(Linear(B, 4 * w, w, dec_g, Wb(bl.fc_proj), dec_x, true, dec_x));
  }
  if (!plan_only) {
    PERFGATE_RETURN_IF_ERROR(LayerNorm(dec_x, layout.lnf_gain, layout.lnf_bias, dec_h, nullptr, B));
  }
  PERFGATE_RETURN_IF_ERROR(LogitsAndArgmax(B));
  if (plan_only) return absl::OkStatus();
  k::AdvanceDecode<<<1, 1, 0, stream>>>(dec_pos, dec_step);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// The prompt (already in `prompt`) through the model: cache filled, the
// last position's logits in dec_logits, their argmax the first token.
absl::Status CudaModel::Impl::EnqueuePrefill() {
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

absl::Status CudaModel::Impl::EnqueueRewind() {
  k::RewindDecode<<<1, 32, 0, stream>>>(dec_pos, dec_step, dec_next, dec_first, pre_len, pre_batch);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  host_pos = pre_len;
  host_step = 1;
  return absl::OkStatus();
}

// Captures one decode step of the prefill's batch as a graph.
absl::Status CudaModel::Impl::Capture() {
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
absl::Status CudaModel::Impl::Decode(int steps, bool use_graph) {
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

}  // namespace perfgate::suites::transformer::cuda
