// Inference: the prefill of a prompt, greedy decode steps whose position
// lives in device memory, so that one step is captured once as a CUDA graph
// and replayed, and continuous-batching steps whose rows each carry their
// own sequence and position.
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
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attr, k::GatherRows));
  return absl::OkStatus();
}

// The logits of dec_h's rows [B, w] (lnf applied), their argmax into
// dec_next, logged when `log` (a greedy decode step's).
absl::Status CudaModel::Impl::LogitsAndArgmax(int B, bool log) {
  PERFGATE_RETURN_IF_ERROR(Linear(B, cfg.width, cfg.vocab, dec_h, Wb(layout.wte), dec_logits, true));
  if (plan_only) return absl::OkStatus();
  k::ArgmaxTokens<<<B, k::kThreads, 0, stream>>>(dec_logits, cfg.vocab, dec_next, log ? dec_log : nullptr,
                                                 dec_step, max_steps);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// The embedding and every block over r.rows new tokens, each at its own
// (slot, position) or all at the device-held position: the residual stream
// ends in r.x, the rows' keys and values in the cache.
absl::Status CudaModel::Impl::EnqueueBlocks(const StepRows& r) {
  const int w = cfg.width, H = cfg.heads, hd = cfg.head_dim(), R = r.rows;
  const float scale = 1.0f / std::sqrt(float(hd));
  if (!plan_only) {
    k::EmbedDecode<<<k::GridFor(size_t(R) * w), k::kThreads, 0, stream>>>(
        r.tokens, r.pos, r.pos_stride, Pf(layout.wte), Pf(layout.wpe), r.x, R, w);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  }
  for (int l = 0; l < cfg.layers; ++l) {
    const BlockLayout& bl = layout.blocks[l];
    if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNorm(r.x, bl.ln1_gain, bl.ln1_bias, r.h, nullptr, R));
    PERFGATE_RETURN_IF_ERROR(Linear(R, w, 3 * w, r.h, Wb(bl.qkv), r.qkv, false));
    if (!plan_only) {
      k::WriteCacheDecode<<<k::GridFor(size_t(R) * w), k::kThreads, 0, stream>>>(
          r.qkv, r.slots, r.pos, r.pos_stride, KCache(l), VCache(l), R, H, hd, cfg.seq);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      const size_t shared = (size_t(cfg.seq) + hd) * sizeof(float);
      k::DecodeAttention<<<R * H, k::kThreads, shared, stream>>>(r.qkv, KCache(l), VCache(l), r.slots, r.pos,
                                                                 r.pos_stride, r.o, H, hd, cfg.seq, scale);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    PERFGATE_RETURN_IF_ERROR(Linear(R, w, w, r.o, Wb(bl.proj), r.x, true, r.x));
    if (!plan_only) PERFGATE_RETURN_IF_ERROR(LayerNorm(r.x, bl.ln2_gain, bl.ln2_bias, r.h, nullptr, R));
    PERFGATE_RETURN_IF_ERROR(Linear(R, w, 4 * w, r.h, Wb(bl.fc), r.u, false));
    if (!plan_only) {
      k::GeluForward<<<k::GridFor(size_t(R) * 4 * w), k::kThreads, 0, stream>>>(r.u, r.g, size_t(R) * 4 * w);
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    }
    PERFGATE_RETURN_IF_ERROR(Linear(R, 4 * w, w, r.g, Wb(bl.fc_proj), r.x, true, r.x));
  }
  return absl::OkStatus();
}

// One greedy decode step of B sequences: dec_next at *dec_pos in, the
// argmax out into dec_next and the log; then the position advances.
absl::Status CudaModel::Impl::EnqueueDecodeStep(int B) {
  PERFGATE_RETURN_IF_ERROR(
      EnqueueBlocks({dec_next, nullptr, dec_pos, 0, B, dec_x, dec_h, dec_qkv, dec_o, dec_u, dec_g}));
  if (!plan_only) {
    PERFGATE_RETURN_IF_ERROR(LayerNorm(dec_x, layout.lnf_gain, layout.lnf_bias, dec_h, nullptr, B));
  }
  PERFGATE_RETURN_IF_ERROR(LogitsAndArgmax(B, true));
  if (plan_only) return absl::OkStatus();
  k::AdvanceDecode<<<1, 1, 0, stream>>>(dec_pos, dec_step);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// One continuous-batching step: `rows` rows in slot_rows (tokens, slots,
// positions, then each of the `runs` runs' last row) through the model in
// the T-row activations; each run's last row's argmax into dec_next[runs].
absl::Status CudaModel::Impl::EnqueueSlotStep(int rows, int runs) {
  const int32_t* meta = slot_rows;
  PERFGATE_RETURN_IF_ERROR(EnqueueBlocks(
      {meta, meta + rows, meta + 2 * rows, 1, rows, Resid(0), H1(0), qkv_rows, Att(0), U(0), G(0)}));
  k::GatherRows<<<k::GridFor(size_t(runs) * cfg.width), k::kThreads, 0, stream>>>(Resid(0), meta + 3 * rows,
                                                                                  dec_x, runs, cfg.width);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  PERFGATE_RETURN_IF_ERROR(LayerNorm(dec_x, layout.lnf_gain, layout.lnf_bias, dec_h, nullptr, runs));
  return LogitsAndArgmax(runs, false);
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
  PERFGATE_RETURN_IF_ERROR(LogitsAndArgmax(B, true));
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
