// The bodies of the kernels declared in cuda_kernels.cuh.
#include "suites/transformer/cuda_kernels.cuh"

#include <cmath>

namespace perfgate::suites::transformer::cuda::kernels {
namespace {

#define PERFGATE_GRID_STRIDE(i, n)                                                        \
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < (n);                 \
       i += size_t{gridDim.x} * blockDim.x)

__device__ __forceinline__ float WarpSum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float WarpMax(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum / max over the block, returned to every thread (blockDim a multiple of 32).
__device__ inline float BlockSum(float v) {
  __shared__ float red[32];
  v = WarpSum(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  v = lane < warps ? red[lane] : 0.0f;
  v = WarpSum(v);
  return v;
}
__device__ inline float BlockMax(float v) {
  __shared__ float red[32];
  v = WarpMax(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  v = lane < warps ? red[lane] : -INFINITY;
  v = WarpMax(v);
  return v;
}

// The same formulas as transformer.cc's Gelu and GeluGrad.
__device__ __forceinline__ float GeluF(float x) {
  const float k = 0.7978845608028654f;
  return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
}
__device__ __forceinline__ float GeluGradF(float x) {
  const float k = 0.7978845608028654f;
  const float u = k * (x + 0.044715f * x * x * x);
  const float th = tanhf(u);
  const float du = k * (1.0f + 3.0f * 0.044715f * x * x);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

// Whether weight decay applies to flat index i (DecayGeometry).
__device__ inline bool Decays(size_t i, const DecayGeometry& g) {
  if (i < g.embed_matrices) return true;
  if (i < g.blocks_begin) return false;
  const size_t r = (i - g.blocks_begin) % g.block_size;
  if (r < g.norm_pair) return false;
  return !(r >= g.ln2_offset && r < g.ln2_offset + g.norm_pair);
}

}  // namespace

// ---- conversions and scaling ----

__global__ void ToBf16(const float* in, bf16* out, size_t n) {
  PERFGATE_GRID_STRIDE(i, n) out[i] = __float2bfloat16_rn(in[i]);
}

__global__ void Scale(float* x, size_t n, float s) {
  PERFGATE_GRID_STRIDE(i, n) x[i] *= s;
}

// ---- embedding ----

__global__ void EmbedForward(const int32_t* tokens, const float* wte, const float* wpe, float* x,
                             size_t n_tokens, int seq, int w) {
  PERFGATE_GRID_STRIDE(i, n_tokens * w) {
    const size_t t = i / w;
    const int c = static_cast<int>(i % w);
    x[i] = wte[size_t(tokens[t]) * w + c] + wpe[(t % seq) * w + c];
  }
}

__global__ void EmbedDecode(const int32_t* tokens, const int* pos, int pos_stride, const float* wte,
                            const float* wpe, float* x, int rows, int w) {
  PERFGATE_GRID_STRIDE(i, size_t(rows) * w) {
    const size_t r = i / w;
    const int c = static_cast<int>(i % w);
    x[i] = wte[size_t(tokens[r]) * w + c] + wpe[size_t(pos[r * pos_stride]) * w + c];
  }
}

__global__ void EmbedBackwardWte(const int32_t* tokens, const float* dx, float* gwte, size_t n_tokens,
                                 int w) {
  PERFGATE_GRID_STRIDE(i, n_tokens * w) {
    const size_t t = i / w;
    const int c = static_cast<int>(i % w);
    atomicAdd(&gwte[size_t(tokens[t]) * w + c], dx[i]);
  }
}

__global__ void EmbedBackwardWpe(const float* dx, float* gwpe, int batch, int seq, int max_seq, int w) {
  PERFGATE_GRID_STRIDE(i, size_t(max_seq) * w) {
    const size_t t = i / w;
    const int c = static_cast<int>(i % w);
    float s = 0.0f;
    if (t < size_t(seq)) {
      for (int b = 0; b < batch; ++b) s += dx[(size_t(b) * seq + t) * w + c];
    }
    gwpe[i] = s;
  }
}

// ---- LayerNorm (eps 1e-5, biased variance), one warp per row ----

__global__ void LayerNormForward(const float* x, const float* gain, const float* bias, bf16* y,
                                 float* mean_out, float* rstd_out, int rows, int w) {
  const int row = blockIdx.x * kRowsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* xr = x + size_t(row) * w;
  float s = 0.0f;
  for (int c = lane; c < w; c += 32) s += xr[c];
  const float mean = WarpSum(s) / w;
  float v = 0.0f;
  for (int c = lane; c < w; c += 32) {
    const float d = xr[c] - mean;
    v += d * d;
  }
  const float rstd = 1.0f / sqrtf(WarpSum(v) / w + 1e-5f);
  bf16* yr = y + size_t(row) * w;
  for (int c = lane; c < w; c += 32) yr[c] = __float2bfloat16_rn((xr[c] - mean) * rstd * gain[c] + bias[c]);
  if (lane == 0 && mean_out != nullptr) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

__global__ void LayerNormBackward(const bf16* dy, const float* x, const float* mean, const float* rstd,
                                  const float* gain, float* dres, bf16* dres_bf, int rows, int w,
                                  bool accumulate) {
  const int row = blockIdx.x * kRowsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const size_t base = size_t(row) * w;
  const float m = mean[row], r = rstd[row];
  float s1 = 0.0f, s2 = 0.0f;
  for (int c = lane; c < w; c += 32) {
    const float dyg = __bfloat162float(dy[base + c]) * gain[c];
    s1 += dyg;
    s2 += dyg * (x[base + c] - m) * r;
  }
  s1 = WarpSum(s1) / w;
  s2 = WarpSum(s2) / w;
  for (int c = lane; c < w; c += 32) {
    const float xhat = (x[base + c] - m) * r;
    const float dyg = __bfloat162float(dy[base + c]) * gain[c];
    const float dx = r * (dyg - s1 - xhat * s2);
    const float out = accumulate ? dres[base + c] + dx : dx;
    dres[base + c] = out;
    dres_bf[base + c] = __float2bfloat16_rn(out);
  }
}

__global__ void LayerNormParamPartials(const bf16* dy, const float* x, const float* mean,
                                       const float* rstd, float* part_gain, float* part_bias, int rows,
                                       int w, int rows_per_chunk) {
  __shared__ float sg[8][33], sb[8][33];
  const int c = blockIdx.x * 32 + threadIdx.x;
  const int r0 = blockIdx.y * rows_per_chunk;
  const int r1 = min(rows, r0 + rows_per_chunk);
  float g = 0.0f, b = 0.0f;
  if (c < w) {
    for (int r = r0 + threadIdx.y; r < r1; r += 8) {
      const float d = __bfloat162float(dy[size_t(r) * w + c]);
      g += d * (x[size_t(r) * w + c] - mean[r]) * rstd[r];
      b += d;
    }
  }
  sg[threadIdx.y][threadIdx.x] = g;
  sb[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && c < w) {
    for (int k = 1; k < 8; ++k) {
      g += sg[k][threadIdx.x];
      b += sb[k][threadIdx.x];
    }
    part_gain[size_t(blockIdx.y) * w + c] = g;
    part_bias[size_t(blockIdx.y) * w + c] = b;
  }
}

__global__ void LayerNormParamFinish(const float* part_gain, const float* part_bias, int chunks, int w,
                                     float* dgain, float* dbias) {
  PERFGATE_GRID_STRIDE(c, size_t(w)) {
    float g = 0.0f, b = 0.0f;
    for (int k = 0; k < chunks; ++k) {
      g += part_gain[size_t(k) * w + c];
      b += part_bias[size_t(k) * w + c];
    }
    dgain[c] = g;
    dbias[c] = b;
  }
}

// ---- attention layout ----

__global__ void PermuteHeads(const bf16* src, bf16* dst, int batch, int seq, int heads, int hd,
                             int sections, bool to_heads) {
  const int w = heads * hd;
  const size_t row_width = size_t(sections) * w;
  const size_t section = size_t(batch) * seq * w;
  PERFGATE_GRID_STRIDE(i, size_t(batch) * seq * row_width) {
    const size_t bt = i / row_width;
    const int col = static_cast<int>(i % row_width);
    const size_t b = bt / seq, t = bt % seq;
    const int s = col / w, hc = col % w, h = hc / hd, d = hc % hd;
    const size_t j = s * section + ((b * heads + h) * seq + t) * hd + d;
    if (to_heads) {
      dst[j] = src[i];
    } else {
      dst[i] = src[j];
    }
  }
}

// ---- causal softmax over the scores, one warp per row ----

__global__ void CausalSoftmaxForward(const float* s, bf16* p, size_t rows, int seq, float scale) {
  const size_t row = size_t(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const int i = static_cast<int>(row % seq);
  const float* sr = s + row * seq;
  bf16* pr = p + row * seq;
  float mx = -INFINITY;
  for (int j = lane; j <= i; j += 32) mx = fmaxf(mx, sr[j]);
  mx = WarpMax(mx);
  float sum = 0.0f;
  for (int j = lane; j <= i; j += 32) sum += expf((sr[j] - mx) * scale);
  const float inv = 1.0f / WarpSum(sum);
  for (int j = lane; j < seq; j += 32) {
    pr[j] = __float2bfloat16_rn(j <= i ? expf((sr[j] - mx) * scale) * inv : 0.0f);
  }
}

__global__ void CausalSoftmaxBackward(bf16* p_ds, const float* dp, size_t rows, int seq, float scale) {
  const size_t row = size_t(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const int i = static_cast<int>(row % seq);
  bf16* pr = p_ds + row * seq;
  const float* dr = dp + row * seq;
  float dot = 0.0f;
  for (int j = lane; j <= i; j += 32) dot += __bfloat162float(pr[j]) * dr[j];
  dot = WarpSum(dot);
  for (int j = lane; j < seq; j += 32) {
    const float v = j <= i ? scale * __bfloat162float(pr[j]) * (dr[j] - dot) : 0.0f;
    pr[j] = __float2bfloat16_rn(v);
  }
}

// ---- GELU ----

__global__ void GeluForward(const bf16* u, bf16* g, size_t n) {
  PERFGATE_GRID_STRIDE(i, n) g[i] = __float2bfloat16_rn(GeluF(__bfloat162float(u[i])));
}

__global__ void GeluBackward(const bf16* u, bf16* dg, size_t n) {
  PERFGATE_GRID_STRIDE(i, n) {
    dg[i] = __float2bfloat16_rn(__bfloat162float(dg[i]) * GeluGradF(__bfloat162float(u[i])));
  }
}

// ---- loss ----

__global__ void CrossEntropy(const float* logits, const int32_t* targets, float* losses, bf16* dlogits,
                             int vocab, float inv_n) {
  const size_t row = blockIdx.x;
  const float* l = logits + row * vocab;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < vocab; j += blockDim.x) mx = fmaxf(mx, l[j]);
  mx = BlockMax(mx);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < vocab; j += blockDim.x) sum += expf(l[j] - mx);
  sum = BlockSum(sum);
  const int target = targets[row];
  if (threadIdx.x == 0) losses[row] = mx + logf(sum) - l[target];
  const float inv = 1.0f / sum;
  bf16* d = dlogits + row * vocab;
  for (int j = threadIdx.x; j < vocab; j += blockDim.x) {
    const float p = expf(l[j] - mx) * inv;
    d[j] = __float2bfloat16_rn((p - (j == target ? 1.0f : 0.0f)) * inv_n);
  }
}

__global__ void MeanLoss(const float* losses, int n, float* out) {
  float s = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += losses[i];
  s = BlockSum(s);
  if (threadIdx.x == 0) *out = s / n;
}

// ---- AdamW ----

__global__ void AdamW(float* params, const float* grads, float* m, float* v, bf16* params_bf, size_t n,
                      AdamWArgs a, DecayGeometry geo) {
  PERFGATE_GRID_STRIDE(i, n) {
    const float g = grads[i];
    const float mi = a.beta1 * m[i] + (1.0f - a.beta1) * g;
    const float vi = a.beta2 * v[i] + (1.0f - a.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const float update = (mi / a.c1) / (sqrtf(vi / a.c2) + a.eps);
    float p = params[i];
    p -= a.lr * (update + (Decays(i, geo) ? a.weight_decay * p : 0.0f));
    params[i] = p;
    params_bf[i] = __float2bfloat16_rn(p);
  }
}

// ---- inference ----

__global__ void WriteCachePrefill(const bf16* k, const bf16* v, bf16* k_cache, bf16* v_cache, int batch,
                                  int heads, int len, int hd, int seq) {
  PERFGATE_GRID_STRIDE(i, size_t(batch) * heads * len * hd) {
    const int d = static_cast<int>(i % hd);
    const size_t t = (i / hd) % len;
    const size_t bh = i / (size_t(hd) * len);
    const size_t j = (bh * seq + t) * hd + d;
    k_cache[j] = k[i];
    v_cache[j] = v[i];
  }
}

__global__ void WriteCacheDecode(const bf16* qkv, const int32_t* slots, const int* pos, int pos_stride,
                                 bf16* k_cache, bf16* v_cache, int rows, int heads, int hd, int seq) {
  const int w = heads * hd;
  PERFGATE_GRID_STRIDE(i, size_t(rows) * w) {
    const size_t r = i / w;
    const size_t b = slots != nullptr ? size_t(slots[r]) : r, p = size_t(pos[r * pos_stride]);
    const int c = static_cast<int>(i % w), h = c / hd, d = c % hd;
    const size_t j = ((b * heads + h) * seq + p) * hd + d;
    k_cache[j] = qkv[r * 3 * w + w + c];
    v_cache[j] = qkv[r * 3 * w + 2 * w + c];
  }
}

__global__ void DecodeAttention(const bf16* qkv, const bf16* k_cache, const bf16* v_cache,
                                const int32_t* slots, const int* pos, int pos_stride, bf16* out, int heads,
                                int hd, int seq, float scale) {
  extern __shared__ float shared[];
  float* scores = shared;
  float* q = shared + seq;
  const int w = heads * hd;
  const int r = blockIdx.x / heads, h = blockIdx.x % heads;
  const int b = slots != nullptr ? slots[r] : r;
  const int n = pos[size_t(r) * pos_stride] + 1;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    q[d] = __bfloat162float(qkv[size_t(r) * 3 * w + size_t(h) * hd + d]);
  }
  __syncthreads();
  const size_t head = (size_t(b) * heads + h) * seq * hd;
  const bf16* kh = k_cache + head;
  const bf16* vh = v_cache + head;
  float mx = -INFINITY;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    float dot = 0.0f;
    for (int d = 0; d < hd; ++d) dot += q[d] * __bfloat162float(kh[size_t(j) * hd + d]);
    scores[j] = dot * scale;
    mx = fmaxf(mx, scores[j]);
  }
  mx = BlockMax(mx);
  float sum = 0.0f;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const float e = expf(scores[j] - mx);
    scores[j] = e;
    sum += e;
  }
  sum = BlockSum(sum);  // its barriers also publish scores[]
  const float inv = 1.0f / sum;
  for (int d = threadIdx.x; d < hd; d += blockDim.x) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += scores[j] * __bfloat162float(vh[size_t(j) * hd + d]);
    out[size_t(r) * w + size_t(h) * hd + d] = __float2bfloat16_rn(acc * inv);
  }
}

__global__ void GatherLast(const bf16* x, bf16* out, int batch, int len, int w) {
  PERFGATE_GRID_STRIDE(i, size_t(batch) * w) {
    const size_t b = i / w;
    const int c = static_cast<int>(i % w);
    out[i] = x[(b * len + len - 1) * w + c];
  }
}

__global__ void GatherRows(const float* x, const int32_t* rows, float* out, int n, int w) {
  PERFGATE_GRID_STRIDE(i, size_t(n) * w) {
    const size_t r = i / w;
    const int c = static_cast<int>(i % w);
    out[i] = x[size_t(rows[r]) * w + c];
  }
}

__global__ void ArgmaxTokens(const float* logits, int vocab, int32_t* next, int32_t* log, const int* step,
                             int max_steps) {
  __shared__ float best_v[32];
  __shared__ int best_i[32];
  const size_t b = blockIdx.x;
  const float* l = logits + b * vocab;
  float v = -INFINITY;
  int idx = vocab;
  for (int j = threadIdx.x; j < vocab; j += blockDim.x) {
    if (idx == vocab || l[j] > v) {  // strictly greater: a thread's j grow, so ties keep the lowest
      v = l[j];
      idx = j;
    }
  }
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, v, o);
    const int oi = __shfl_xor_sync(0xffffffffu, idx, o);
    if (ov > v || (ov == v && oi < idx)) {
      v = ov;
      idx = oi;
    }
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    best_v[warp] = v;
    best_i[warp] = idx;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int k = 1; k < int(blockDim.x >> 5); ++k) {
      if (best_v[k] > v || (best_v[k] == v && best_i[k] < idx)) {
        v = best_v[k];
        idx = best_i[k];
      }
    }
    next[b] = idx;
    if (log != nullptr) log[b * max_steps + *step] = idx;
  }
}

__global__ void AdvanceDecode(int* pos, int* step) {
  *pos += 1;
  *step += 1;
}

__global__ void RewindDecode(int* pos, int* step, int32_t* next, const int32_t* first, int len, int batch) {
  if (threadIdx.x == 0) {
    *pos = len;
    *step = 1;
  }
  for (int b = threadIdx.x; b < batch; b += blockDim.x) next[b] = first[b];
}

__global__ void StartDecode(int* pos, int* step, const int32_t* next, int32_t* first, int len, int batch) {
  if (threadIdx.x == 0) {
    *pos = len;
    *step = 1;
  }
  for (int b = threadIdx.x; b < batch; b += blockDim.x) first[b] = next[b];
}

#undef PERFGATE_GRID_STRIDE

}  // namespace perfgate::suites::transformer::cuda::kernels
