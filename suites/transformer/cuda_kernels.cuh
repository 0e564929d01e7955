// The CUDA backend's own kernels (everything but the matrix products), each
// forward with its backward: their launch geometry and declarations; the
// bodies are in cuda_kernels.cu, one translation unit, so every file of the
// backend launches (and cudaFuncGetAttributes preloads) the same kernels.
// Conventions: bf16 storage, fp32 arithmetic and reductions; row-major
// activations [tokens, features]; attention tensors [batch·heads, seq,
// head_dim]; the residual stream and its gradient fp32.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace perfgate::suites::transformer::cuda::kernels {

using bf16 = __nv_bfloat16;

/// Threads per block of every kernel launched with GridFor or RowGrid.
constexpr int kThreads = 256;
/// Rows per block of the warp-per-row kernels.
constexpr int kRowsPerBlock = kThreads / 32;

/// Blocks of kThreads for a grid-stride loop over n elements (1 to 65536).
inline unsigned GridFor(size_t n) {
  const size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? (blocks == 0 ? 1 : blocks) : 65536);
}
/// Blocks of kThreads for a warp-per-row kernel over `rows` rows.
inline unsigned RowGrid(size_t rows) {
  return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
}

// ---- conversions and scaling ----

/// out = in rounded to bf16 (round to nearest even), n values.
__global__ void ToBf16(const float* in, bf16* out, size_t n);

/// x *= s over n values, in place.
__global__ void Scale(float* x, size_t n, float s);

// ---- embedding ----

// x[t, c] = wte[token[t], c] + wpe[t mod seq, c], fp32.
__global__ void EmbedForward(const int32_t* tokens, const float* wte, const float* wpe, float* x,
                             size_t n_tokens, int seq, int w);

// Rows of new tokens (a decode step, or a continuous-batching step): row r's
// token at position pos[r · pos_stride] (pos_stride 0: every row at the one
// position held in device memory, as a greedy decode step).
__global__ void EmbedDecode(const int32_t* tokens, const int* pos, int pos_stride, const float* wte,
                            const float* wpe, float* x, int rows, int w);

// d wte[token[t]] += dx[t]: added to what the LM head's dW wrote (tied).
__global__ void EmbedBackwardWte(const int32_t* tokens, const float* dx, float* gwte, size_t n_tokens,
                                 int w);

// d wpe[t] = sum over the batch of dx[b, t], written (not added) for every
// one of max_seq rows: rows past seq get 0.
__global__ void EmbedBackwardWpe(const float* dx, float* gwpe, int batch, int seq, int max_seq, int w);

// ---- LayerNorm (eps 1e-5, biased variance), one warp per row ----

// y = (x − mean)·rstd·gain + bias in bf16 for `rows` rows of w; the rows'
// mean and rstd into mean_out and rstd_out when those are not null.
__global__ void LayerNormForward(const float* x, const float* gain, const float* bias, bf16* y,
                                 float* mean_out, float* rstd_out, int rows, int w);

// dx = rstd·(dy·g − mean(dy·g) − x̂·mean(dy·g·x̂)), written into the fp32
// residual gradient (added when `accumulate`, else overwriting) and its bf16
// copy, the next GEMM's input.
__global__ void LayerNormBackward(const bf16* dy, const float* x, const float* mean, const float* rstd,
                                  const float* gain, float* dres, bf16* dres_bf, int rows, int w,
                                  bool accumulate);

// Gain and bias gradients, first pass: per chunk of rows_per_chunk rows,
// partial sums of dy·x̂ and dy per column. Block (32, 8): x = column, y = row.
__global__ void LayerNormParamPartials(const bf16* dy, const float* x, const float* mean,
                                       const float* rstd, float* part_gain, float* part_bias, int rows,
                                       int w, int rows_per_chunk);

// Second pass: the chunks' sums, written (not added) into the gradients.
__global__ void LayerNormParamFinish(const float* part_gain, const float* part_bias, int chunks, int w,
                                     float* dgain, float* dbias);

// ---- attention layout ----

// Between rows of `sections`·width features ([B, T, sections·w], row-major)
// and `sections` stacked head-major tensors [sections][B, H, T, hd]. to_heads:
// rows → heads (Q, K, V from qkv; dO from d(att)); else heads → rows.
__global__ void PermuteHeads(const bf16* src, bf16* dst, int batch, int seq, int heads, int hd,
                             int sections, bool to_heads);

// ---- causal softmax over the scores, one warp per row ----

// P[i, j] = softmax_j(scale · S[i, j]) for j <= i (i = the row's query
// position), 0 above the diagonal. S fp32, P bf16.
__global__ void CausalSoftmaxForward(const float* s, bf16* p, size_t rows, int seq, float scale);

// dS = scale · P ∘ (dP − rowsum(dP ∘ P)), in place over P (its last use).
__global__ void CausalSoftmaxBackward(bf16* p_ds, const float* dp, size_t rows, int seq, float scale);

// ---- GELU ----

// g = GELU(u) (the tanh form), n values.
__global__ void GeluForward(const bf16* u, bf16* g, size_t n);

// du = dg · GELU'(u), in place over dg.
__global__ void GeluBackward(const bf16* u, bf16* dg, size_t n);

// ---- loss ----

// One block per token: loss[t] = logsumexp(logits[t]) − logits[t, target],
// d logits[t] = (softmax(logits[t]) − onehot(target)) · inv_n (bf16).
__global__ void CrossEntropy(const float* logits, const int32_t* targets, float* losses, bf16* dlogits,
                             int vocab, float inv_n);

// The mean of n losses, one block, in a fixed order (deterministic).
__global__ void MeanLoss(const float* losses, int n, float* out);

// ---- AdamW ----

// Which flat indices weight decay applies to, as DecayMask: wte and wpe
// (the first `embed_matrices`), then in each block everything but the two
// norm pairs (2·width values at the block's start and at ln2_offset).
struct DecayGeometry {
  size_t embed_matrices = 0;
  size_t blocks_begin = 0;
  size_t block_size = 1;
  size_t norm_pair = 0;
  size_t ln2_offset = 0;
};

// One AdamW step's hyper-parameters, as transformer::AdamW, and bias corrections.
struct AdamWArgs {
  float lr, beta1, beta2, eps, weight_decay;
  float c1, c2;  // the bias corrections 1 − β^t, from the host as transformer::AdamWUpdate computes them
};

// transformer::AdamWUpdate's arithmetic in the same order, then the bf16 copy.
__global__ void AdamW(float* params, const float* grads, float* m, float* v, bf16* params_bf, size_t n,
                      AdamWArgs a, DecayGeometry geo);

// ---- inference ----

// The prompt's K and V ([B, H, T, hd] each) into the cache [B_max][H][seq][hd].
__global__ void WriteCachePrefill(const bf16* k, const bf16* v, bf16* k_cache, bf16* v_cache, int batch,
                                  int heads, int len, int hd, int seq);

// K and V of rows of new tokens (qkv rows [rows, 3w]) into the cache: row r
// into sequence slots[r] (r itself when slots is null) at position
// pos[r · pos_stride].
__global__ void WriteCacheDecode(const bf16* qkv, const int32_t* slots, const int* pos, int pos_stride,
                                 bf16* k_cache, bf16* v_cache, int rows, int heads, int hd, int seq);

// One block per (row, head): the row's query at position p = pos[r ·
// pos_stride] against the p+1 cached keys of its sequence (slots[r], or r
// when slots is null), fp32 softmax, weighted sum of the cached values.
// Dynamic shared memory: seq + hd floats.
__global__ void DecodeAttention(const bf16* qkv, const bf16* k_cache, const bf16* v_cache,
                                const int32_t* slots, const int* pos, int pos_stride, bf16* out, int heads,
                                int hd, int seq, float scale);

// The last position's rows of x [B, T, w] → [B, w].
__global__ void GatherLast(const bf16* x, bf16* out, int batch, int len, int w);

// fp32 rows x[rows[i]] → out[i], n rows of w: each run's last row.
__global__ void GatherRows(const float* x, const int32_t* rows, float* out, int n, int w);

// One block per sequence: the index of the largest logit (lowest on ties,
// as transformer::Argmax) becomes the next input token and, when `log` is
// not null, is logged at *step.
__global__ void ArgmaxTokens(const float* logits, int vocab, int32_t* next, int32_t* log, const int* step,
                             int max_steps);

// After a decode step: the next position and log slot.
__global__ void AdvanceDecode(int* pos, int* step);

// Back to the state right after the prefill: position `len`, one token
// logged (the prefill's argmax, kept in `first`), which is the next input.
__global__ void RewindDecode(int* pos, int* step, int32_t* next, const int32_t* first, int len, int batch);

// Right after the prefill's argmax: remember its tokens for RewindDecode.
__global__ void StartDecode(int* pos, int* step, const int32_t* next, int32_t* first, int len, int batch);

}  // namespace perfgate::suites::transformer::cuda::kernels
