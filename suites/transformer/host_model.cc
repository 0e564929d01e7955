#include "suites/transformer/host_model.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace perfgate::suites::transformer {
namespace {

constexpr float kLayerNormEps = 1e-5f;

// Misuse of the model (a token outside the vocabulary, a batch larger than
// the config) is a bug in the caller: the suites validate their parameters
// before they get here.
void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "HostModel: %s\n", what);
  std::abort();
}

void RequireTokens(const int32_t* tokens, size_t n, int vocab) {
  for (size_t i = 0; i < n; ++i) {
    if (tokens[i] < 0 || tokens[i] >= vocab) {
      std::fprintf(stderr, "HostModel: token %d at index %zu is outside [0, %d)\n", tokens[i], i,
                   vocab);
      std::abort();
    }
  }
}

// C[m, n] = alpha · op(A) · op(B) + beta · C, row-major.
void Gemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* a, int lda,
          const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans,
              m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// y[rows, out] = x[rows, in] · Wᵀ (+ y when accumulate), W [out, in].
void Linear(const float* x, const float* w, int rows, int in, int out, float* y,
            bool accumulate = false) {
  Gemm(false, true, rows, out, in, 1.0f, x, in, w, in, accumulate ? 1.0f : 0.0f, y, out);
}

// The two backward products of Linear: dW = dyᵀ · x (overwritten) and
// dx = dy · W (overwritten).
void LinearBackward(const float* x, const float* w, const float* dy, int rows, int in, int out,
                    float* dw, float* dx) {
  Gemm(true, false, out, in, rows, 1.0f, dy, out, x, in, 0.0f, dw, in);
  Gemm(false, false, rows, in, out, 1.0f, dy, out, w, in, 0.0f, dx, in);
}

// y = (x - mean) · rstd · gain + bias per row; stats keeps (mean, rstd) per
// row for the backward pass (may be null).
void LayerNorm(const float* x, const float* gain, const float* bias, int rows, int width, float* y,
               float* stats) {
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * width;
    float* yr = y + size_t(r) * width;
    double sum = 0.0;
    for (int i = 0; i < width; ++i) sum += xr[i];
    const float mean = float(sum / width);
    double var = 0.0;
    for (int i = 0; i < width; ++i) var += double(xr[i] - mean) * double(xr[i] - mean);
    const float rstd = 1.0f / std::sqrt(float(var / width) + kLayerNormEps);
    for (int i = 0; i < width; ++i) yr[i] = (xr[i] - mean) * rstd * gain[i] + bias[i];
    if (stats != nullptr) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
  }
}

// Adds the input gradient of LayerNorm to dx and overwrites dgain and dbias.
void LayerNormBackward(const float* x, const float* stats, const float* gain, const float* dy,
                       int rows, int width, float* dx, float* dgain, float* dbias) {
  std::fill(dgain, dgain + width, 0.0f);
  std::fill(dbias, dbias + width, 0.0f);
  for (int r = 0; r < rows; ++r) {
    const float* xr = x + size_t(r) * width;
    const float* dyr = dy + size_t(r) * width;
    float* dxr = dx + size_t(r) * width;
    const float mean = stats[2 * r], rstd = stats[2 * r + 1];
    float sum_dxhat = 0.0f, sum_dxhat_xhat = 0.0f;
    for (int i = 0; i < width; ++i) {
      const float xhat = (xr[i] - mean) * rstd;
      const float dxhat = dyr[i] * gain[i];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += dxhat * xhat;
      dgain[i] += dyr[i] * xhat;
      dbias[i] += dyr[i];
    }
    const float mean_dxhat = sum_dxhat / float(width);
    const float mean_dxhat_xhat = sum_dxhat_xhat / float(width);
    for (int i = 0; i < width; ++i) {
      const float xhat = (xr[i] - mean) * rstd;
      dxr[i] += rstd * (dyr[i] * gain[i] - mean_dxhat - xhat * mean_dxhat_xhat);
    }
  }
}

// Causal attention of one head: nq queries at positions q0..q0+nq-1 over
// keys and values at positions 0..nk-1 (nk >= q0 + nq). p [nq, nk] receives
// the probabilities (zero where masked), out [nq, hd] the weighted values.
void Attend(const float* q, int ldq, const float* k, int ldk, const float* v, int ldv, int nq,
            int q0, int nk, int hd, float* p, float* out, int ldo) {
  const float scale = 1.0f / std::sqrt(float(hd));
  Gemm(false, true, nq, nk, hd, scale, q, ldq, k, ldk, 0.0f, p, nk);
  for (int i = 0; i < nq; ++i) {
    float* row = p + size_t(i) * nk;
    const int visible = q0 + i + 1;
    float max = row[0];
    for (int j = 1; j < visible; ++j) max = std::max(max, row[j]);
    float sum = 0.0f;
    for (int j = 0; j < visible; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    const float inv = 1.0f / sum;
    for (int j = 0; j < visible; ++j) row[j] *= inv;
    std::fill(row + visible, row + nk, 0.0f);
  }
  Gemm(false, false, nq, hd, nk, 1.0f, p, nk, v, ldv, 0.0f, out, ldo);
}

// Backward of one head of Attend over a whole sequence (q0 = 0, nk = seq):
// q points at the head's queries inside qkv, its keys and values lying w and
// 2w further (rows 3w apart, as in qkv); probs [seq, seq] are the forward
// pass's probabilities and dout the gradient of the head's output (rows w
// apart). Writes dQ, dK, dV at the same places in dqkv; ds [seq, seq] is
// scratch.
void AttendBackward(const float* q, const float* probs, const float* dout, int seq, int hd, int w,
                    float scale, float* dq, float* ds) {
  const float* k = q + w;
  const float* v = q + 2 * w;
  float* dk = dq + w;
  float* dv = dq + 2 * w;
  // dP = dO · Vᵀ, dV = Pᵀ · dO.
  Gemm(false, true, seq, seq, hd, 1.0f, dout, w, v, 3 * w, 0.0f, ds, seq);
  Gemm(true, false, seq, hd, seq, 1.0f, probs, seq, dout, w, 0.0f, dv, 3 * w);
  // Softmax backward: dS = P ⊙ (dP - rowsum(P ⊙ dP)); masked entries have P = 0.
  for (int i = 0; i < seq; ++i) {
    const float* pr = probs + size_t(i) * seq;
    float* dr = ds + size_t(i) * seq;
    float dot = 0.0f;
    for (int j = 0; j <= i; ++j) dot += pr[j] * dr[j];
    for (int j = 0; j <= i; ++j) dr[j] = pr[j] * (dr[j] - dot);
    std::fill(dr + i + 1, dr + seq, 0.0f);
  }
  // S = scale · Q · Kᵀ: dQ = scale · dS · K, dK = scale · dSᵀ · Q.
  Gemm(false, false, seq, hd, seq, scale, ds, seq, k, 3 * w, 0.0f, dq, 3 * w);
  Gemm(true, false, seq, hd, seq, scale, ds, seq, q, 3 * w, 0.0f, dk, 3 * w);
}

// Backward of the embeddings x = wte[token] + wpe[position]: adds each
// position's dx [batch·seq, w] to its token's row of dwte and its position's
// row of dwpe.
void EmbeddingBackward(const float* dres, const int32_t* inputs, int batch, int seq, int w,
                       float* dwte, float* dwpe) {
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < seq; ++t) {
      const float* dx = dres + (size_t(b) * seq + t) * w;
      float* dte = dwte + size_t(inputs[b * seq + t]) * w;
      float* dpe = dwpe + size_t(t) * w;
      for (int i = 0; i < w; ++i) {
        dte[i] += dx[i];
        dpe[i] += dx[i];
      }
    }
  }
}

}  // namespace

// What Forward keeps for Backward, for a batch of `batch` × `seq` tokens
// (n = batch · seq rows). Per-layer arrays are stacked, layer-major.
struct HostModel::Activations {
  int batch = 0, seq = 0;
  bool has_targets = false;
  std::vector<int32_t> inputs, targets;
  std::vector<float> res;        // [layers + 1][n][w]: the residual stream entering each block, then the last
  std::vector<float> mid;        // [layers][n][w]: the stream after attention
  std::vector<float> ln1, ln2;   // [layers][n][w]: the normalised inputs of attention and MLP
  std::vector<float> ln1_stats, ln2_stats;  // [layers][n][2]: mean, rstd
  std::vector<float> qkv;        // [layers][n][3w]
  std::vector<float> probs;      // [layers][batch][heads][seq][seq]
  std::vector<float> att;        // [layers][n][w]: heads merged, before the projection
  std::vector<float> fc;         // [layers][n][4w]: before GELU
  std::vector<float> gelu;       // [n][4w]: scratch
  std::vector<float> lnf, lnf_stats;  // [n][w], [n][2]
  std::vector<float> logits;     // [n][vocab]; softmax probabilities after a training Forward
};

HostModel::HostModel(const Config& config, std::vector<float> params)
    : config_(config), layout_(MakeLayout(config)), params_(std::move(params)) {
  const std::string problem = Validate(config_);
  if (!problem.empty()) {
    std::fprintf(stderr, "HostModel: invalid config: %s\n", problem.c_str());
    std::abort();
  }
  Require(params_.size() == layout_.total, "the parameter count does not match the config's layout");
  grads_.assign(layout_.total, 0.0f);
  m_.assign(layout_.total, 0.0f);
  v_.assign(layout_.total, 0.0f);
  decay_ = DecayMask(config_);
  acts_ = std::make_shared<Activations>();
}

void HostModel::RunForward(Activations& a, const int32_t* inputs, int batch, int seq) const {
  const Config& c = config_;
  const int w = c.width, hd = c.head_dim(), L = c.layers;
  const int n = batch * seq;
  const size_t nw = size_t(n) * w;
  const float* p = params_.data();
  a.batch = batch;
  a.seq = seq;
  a.inputs.assign(inputs, inputs + n);
  a.res.resize((L + 1) * nw);
  a.mid.resize(L * nw);
  a.ln1.resize(L * nw);
  a.ln2.resize(L * nw);
  a.ln1_stats.resize(size_t(L) * n * 2);
  a.ln2_stats.resize(size_t(L) * n * 2);
  a.qkv.resize(L * nw * 3);
  a.probs.resize(size_t(L) * batch * c.heads * seq * seq);
  a.att.resize(L * nw);
  a.fc.resize(L * nw * 4);
  a.gelu.resize(nw * 4);
  a.lnf.resize(nw);
  a.lnf_stats.resize(size_t(n) * 2);
  a.logits.resize(size_t(n) * c.vocab);

  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < seq; ++t) {
      const int token = inputs[b * seq + t];
      const float* te = p + layout_.wte.offset + size_t(token) * w;
      const float* pe = p + layout_.wpe.offset + size_t(t) * w;
      float* x = a.res.data() + (size_t(b) * seq + t) * w;
      for (int i = 0; i < w; ++i) x[i] = te[i] + pe[i];
    }
  }

  for (int l = 0; l < L; ++l) {
    const BlockLayout& bl = layout_.blocks[l];
    const float* x = a.res.data() + l * nw;
    float* ln1 = a.ln1.data() + l * nw;
    float* qkv = a.qkv.data() + l * nw * 3;
    float* att = a.att.data() + l * nw;
    float* mid = a.mid.data() + l * nw;
    float* ln2 = a.ln2.data() + l * nw;
    float* fc = a.fc.data() + l * nw * 4;
    float* out = a.res.data() + (l + 1) * nw;

    LayerNorm(x, p + bl.ln1_gain.offset, p + bl.ln1_bias.offset, n, w, ln1,
              a.ln1_stats.data() + size_t(l) * n * 2);
    Linear(ln1, p + bl.qkv.offset, n, w, 3 * w, qkv);
    for (int b = 0; b < batch; ++b) {
      for (int h = 0; h < c.heads; ++h) {
        const float* q = qkv + size_t(b) * seq * 3 * w + h * hd;
        float* probs = a.probs.data() + ((size_t(l) * batch + b) * c.heads + h) * seq * seq;
        Attend(q, 3 * w, q + w, 3 * w, q + 2 * w, 3 * w, seq, 0, seq, hd, probs,
               att + size_t(b) * seq * w + h * hd, w);
      }
    }
    std::copy(x, x + nw, mid);
    Linear(att, p + bl.proj.offset, n, w, w, mid, /*accumulate=*/true);
    LayerNorm(mid, p + bl.ln2_gain.offset, p + bl.ln2_bias.offset, n, w, ln2,
              a.ln2_stats.data() + size_t(l) * n * 2);
    Linear(ln2, p + bl.fc.offset, n, w, 4 * w, fc);
    for (size_t i = 0; i < nw * 4; ++i) a.gelu[i] = Gelu(fc[i]);
    std::copy(mid, mid + nw, out);
    Linear(a.gelu.data(), p + bl.fc_proj.offset, n, 4 * w, w, out, /*accumulate=*/true);
  }

  LayerNorm(a.res.data() + L * nw, p + layout_.lnf_gain.offset, p + layout_.lnf_bias.offset, n, w,
            a.lnf.data(), a.lnf_stats.data());
  Linear(a.lnf.data(), p + layout_.wte.offset, n, w, c.vocab, a.logits.data());
}

void HostModel::CheckBatch(const int32_t* inputs, int batch, int seq) const {
  Require(batch >= 1 && batch <= config_.batch, "batch must be in [1, config.batch]");
  Require(seq >= 1 && seq <= config_.seq, "seq must be in [1, config.seq]");
  RequireTokens(inputs, size_t(batch) * seq, config_.vocab);
}

float HostModel::Forward(const int32_t* inputs, const int32_t* targets, int batch, int seq) {
  CheckBatch(inputs, batch, seq);
  RequireTokens(targets, size_t(batch) * seq, config_.vocab);
  Activations& a = *acts_;
  RunForward(a, inputs, batch, seq);
  const int n = batch * seq, V = config_.vocab;
  a.targets.assign(targets, targets + n);
  a.has_targets = true;
  // Cross-entropy through a max-subtracted log-softmax; the logits become the
  // probabilities Backward needs.
  double total = 0.0;
  for (int r = 0; r < n; ++r) {
    float* row = a.logits.data() + size_t(r) * V;
    const float max = *std::max_element(row, row + V);
    double sum = 0.0;
    for (int j = 0; j < V; ++j) {
      row[j] = std::exp(row[j] - max);
      sum += row[j];
    }
    total += std::log(sum) - std::log(double(row[targets[r]]));
    const float inv = float(1.0 / sum);
    for (int j = 0; j < V; ++j) row[j] *= inv;
  }
  return float(total / n);
}

void HostModel::Backward(const GradientReady& ready) {
  Activations& a = *acts_;
  Require(a.has_targets, "Backward needs a Forward first");
  const Config& c = config_;
  const int w = c.width, hd = c.head_dim(), L = c.layers, V = c.vocab;
  const int batch = a.batch, seq = a.seq, n = batch * seq;
  const size_t nw = size_t(n) * w;
  const float* p = params_.data();
  float* g = grads_.data();

  // d loss / d logits = (softmax - onehot) / n, in place over the probabilities.
  std::vector<float> dlogits(a.logits);
  const float inv_n = 1.0f / float(n);
  for (int r = 0; r < n; ++r) {
    float* row = dlogits.data() + size_t(r) * V;
    row[a.targets[r]] -= 1.0f;
    for (int j = 0; j < V; ++j) row[j] *= inv_n;
  }

  // LM head (tied): the first part of wte's gradient; the embedding lookup
  // adds the rest at the end.
  std::vector<float> dh(nw), dres(nw, 0.0f);
  LinearBackward(a.lnf.data(), p + layout_.wte.offset, dlogits.data(), n, w, V,
                 g + layout_.wte.offset, dh.data());
  LayerNormBackward(a.res.data() + L * nw, a.lnf_stats.data(), p + layout_.lnf_gain.offset,
                    dh.data(), n, w, dres.data(), g + layout_.lnf_gain.offset,
                    g + layout_.lnf_bias.offset);

  std::vector<float> dbig(nw * 4), dqkv(nw * 3), datt(nw), ds(size_t(seq) * seq);
  for (int l = L - 1; l >= 0; --l) {
    const BlockLayout& bl = layout_.blocks[l];
    const float* qkv = a.qkv.data() + l * nw * 3;
    const float* fc = a.fc.data() + l * nw * 4;

    // MLP: out = mid + GELU(ln2 · Wfcᵀ) · Wfc_projᵀ; dres holds d out.
    for (size_t i = 0; i < nw * 4; ++i) a.gelu[i] = Gelu(fc[i]);
    LinearBackward(a.gelu.data(), p + bl.fc_proj.offset, dres.data(), n, 4 * w, w,
                   g + bl.fc_proj.offset, dbig.data());
    for (size_t i = 0; i < nw * 4; ++i) dbig[i] *= GeluGrad(fc[i]);
    LinearBackward(a.ln2.data() + l * nw, p + bl.fc.offset, dbig.data(), n, w, 4 * w,
                   g + bl.fc.offset, dh.data());
    LayerNormBackward(a.mid.data() + l * nw, a.ln2_stats.data() + size_t(l) * n * 2,
                      p + bl.ln2_gain.offset, dh.data(), n, w, dres.data(), g + bl.ln2_gain.offset,
                      g + bl.ln2_bias.offset);

    // Attention: mid = x + att · Wprojᵀ; dres now holds d mid.
    LinearBackward(a.att.data() + l * nw, p + bl.proj.offset, dres.data(), n, w, w,
                   g + bl.proj.offset, datt.data());
    const float scale = 1.0f / std::sqrt(float(hd));
    for (int b = 0; b < batch; ++b) {
      for (int h = 0; h < c.heads; ++h) {
        const size_t at = size_t(b) * seq * 3 * w + h * hd;
        const float* probs = a.probs.data() + ((size_t(l) * batch + b) * c.heads + h) * seq * seq;
        const float* dout = datt.data() + size_t(b) * seq * w + h * hd;
        AttendBackward(qkv + at, probs, dout, seq, hd, w, scale, dqkv.data() + at, ds.data());
      }
    }
    LinearBackward(a.ln1.data() + l * nw, p + bl.qkv.offset, dqkv.data(), n, w, 3 * w,
                   g + bl.qkv.offset, dh.data());
    LayerNormBackward(a.res.data() + l * nw, a.ln1_stats.data() + size_t(l) * n * 2,
                      p + bl.ln1_gain.offset, dh.data(), n, w, dres.data(), g + bl.ln1_gain.offset,
                      g + bl.ln1_bias.offset);
    if (ready) ready(bl.begin, bl.end);
  }

  // Embeddings: x = wte[token] + wpe[position].
  float* dwpe = g + layout_.wpe.offset;
  std::fill(dwpe, dwpe + layout_.wpe.size(), 0.0f);
  EmbeddingBackward(dres.data(), a.inputs.data(), batch, seq, w, g + layout_.wte.offset, dwpe);
  if (ready) ready(0, layout_.blocks[0].begin);
}

void HostModel::Step(const AdamW& hp) {
  ++step_;
  AdamWUpdate(hp, step_, layout_.total, params_.data(), grads_.data(), m_.data(), v_.data(),
              decay_.data());
}

std::vector<float> HostModel::RunCached(const int32_t* tokens, int n) {
  const Config& c = config_;
  const int w = c.width, hd = c.head_dim(), L = c.layers, batch = cache_batch_;
  const int p0 = position_, nk = p0 + n;
  const int rows = batch * n;
  const size_t rw = size_t(rows) * w;
  const float* p = params_.data();

  std::vector<float> x(rw), h(rw), qkv(rw * 3), att(rw), fc(rw * 4), probs(size_t(n) * nk);
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < n; ++t) {
      const float* te = p + layout_.wte.offset + size_t(tokens[b * n + t]) * w;
      const float* pe = p + layout_.wpe.offset + size_t(p0 + t) * w;
      float* xr = x.data() + (size_t(b) * n + t) * w;
      for (int i = 0; i < w; ++i) xr[i] = te[i] + pe[i];
    }
  }
  for (int l = 0; l < L; ++l) {
    const BlockLayout& bl = layout_.blocks[l];
    LayerNorm(x.data(), p + bl.ln1_gain.offset, p + bl.ln1_bias.offset, rows, w, h.data(), nullptr);
    Linear(h.data(), p + bl.qkv.offset, rows, w, 3 * w, qkv.data());
    for (int b = 0; b < batch; ++b) {
      const size_t cache_at = (size_t(l) * batch + b) * c.seq * w;
      for (int t = 0; t < n; ++t) {
        const float* r = qkv.data() + (size_t(b) * n + t) * 3 * w;
        std::copy(r + w, r + 2 * w, k_cache_.data() + cache_at + size_t(p0 + t) * w);
        std::copy(r + 2 * w, r + 3 * w, v_cache_.data() + cache_at + size_t(p0 + t) * w);
      }
      for (int hh = 0; hh < c.heads; ++hh) {
        Attend(qkv.data() + size_t(b) * n * 3 * w + hh * hd, 3 * w,
               k_cache_.data() + cache_at + hh * hd, w, v_cache_.data() + cache_at + hh * hd, w, n,
               p0, nk, hd, probs.data(), att.data() + size_t(b) * n * w + hh * hd, w);
      }
    }
    Linear(att.data(), p + bl.proj.offset, rows, w, w, x.data(), /*accumulate=*/true);
    LayerNorm(x.data(), p + bl.ln2_gain.offset, p + bl.ln2_bias.offset, rows, w, h.data(), nullptr);
    Linear(h.data(), p + bl.fc.offset, rows, w, 4 * w, fc.data());
    for (float& f : fc) f = Gelu(f);
    Linear(fc.data(), p + bl.fc_proj.offset, rows, 4 * w, w, x.data(), /*accumulate=*/true);
  }
  position_ = nk;

  // Only the last position of each sequence needs logits.
  std::vector<float> last(size_t(batch) * w), logits(size_t(batch) * c.vocab);
  for (int b = 0; b < batch; ++b) {
    const float* xr = x.data() + (size_t(b) * n + n - 1) * w;
    std::copy(xr, xr + w, last.data() + size_t(b) * w);
  }
  LayerNorm(last.data(), p + layout_.lnf_gain.offset, p + layout_.lnf_bias.offset, batch, w,
            h.data(), nullptr);
  Linear(h.data(), p + layout_.wte.offset, batch, w, c.vocab, logits.data());
  return logits;
}

std::vector<float> HostModel::Prefill(const int32_t* prompt, int batch, int prompt_len) {
  CheckBatch(prompt, batch, prompt_len);
  cache_batch_ = batch;
  position_ = 0;
  const size_t cache = size_t(config_.layers) * batch * config_.seq * config_.width;
  k_cache_.resize(cache);
  v_cache_.resize(cache);
  return RunCached(prompt, prompt_len);
}

std::vector<float> HostModel::Decode(const int32_t* tokens) {
  Require(cache_batch_ > 0, "Decode needs a Prefill first");
  Require(position_ < config_.seq, "Decode past config.seq: the KV cache and positions are full");
  RequireTokens(tokens, size_t(cache_batch_), config_.vocab);
  return RunCached(tokens, 1);
}

void HostModel::OpenSlots(int slots) {
  Require(slots > 0, "OpenSlots needs at least one slot");
  cache_batch_ = slots;
  position_ = 0;
  const size_t cache = size_t(config_.layers) * slots * config_.seq * config_.width;
  k_cache_.assign(cache, 0.0f);
  v_cache_.assign(cache, 0.0f);
}

std::vector<float> HostModel::StepSlots(const std::vector<SlotRun>& runs) {
  const Config& c = config_;
  const int w = c.width, hd = c.head_dim();
  const std::string problem = CheckSlotRuns(runs, cache_batch_, c.seq, c.vocab);
  Require(problem.empty(), problem.c_str());
  std::vector<size_t> row0;  // each run's first row
  size_t rows = 0, max_probs = 0;
  for (const SlotRun& r : runs) {
    const int n = static_cast<int>(r.tokens.size());
    row0.push_back(rows);
    rows += size_t(n);
    max_probs = std::max(max_probs, size_t(n) * size_t(r.start + n));
  }
  const size_t rw = rows * w;
  const float* p = params_.data();
  std::vector<float> x(rw), h(rw), qkv(rw * 3), att(rw), fc(rw * 4), probs(max_probs);
  for (size_t i = 0; i < runs.size(); ++i) {
    for (size_t t = 0; t < runs[i].tokens.size(); ++t) {
      const float* te = p + layout_.wte.offset + size_t(runs[i].tokens[t]) * w;
      const float* pe = p + layout_.wpe.offset + (size_t(runs[i].start) + t) * w;
      float* xr = x.data() + (row0[i] + t) * w;
      for (int j = 0; j < w; ++j) xr[j] = te[j] + pe[j];
    }
  }
  const int n_rows = static_cast<int>(rows);
  for (int l = 0; l < c.layers; ++l) {
    const BlockLayout& bl = layout_.blocks[l];
    LayerNorm(x.data(), p + bl.ln1_gain.offset, p + bl.ln1_bias.offset, n_rows, w, h.data(), nullptr);
    Linear(h.data(), p + bl.qkv.offset, n_rows, w, 3 * w, qkv.data());
    for (size_t i = 0; i < runs.size(); ++i) {
      const SlotRun& r = runs[i];
      const int n = static_cast<int>(r.tokens.size());
      const size_t cache_at = (size_t(l) * cache_batch_ + r.slot) * c.seq * w;
      for (int t = 0; t < n; ++t) {
        const float* q = qkv.data() + (row0[i] + t) * 3 * w;
        std::copy(q + w, q + 2 * w, k_cache_.data() + cache_at + size_t(r.start + t) * w);
        std::copy(q + 2 * w, q + 3 * w, v_cache_.data() + cache_at + size_t(r.start + t) * w);
      }
      for (int hh = 0; hh < c.heads; ++hh) {
        Attend(qkv.data() + row0[i] * 3 * w + hh * hd, 3 * w, k_cache_.data() + cache_at + hh * hd, w,
               v_cache_.data() + cache_at + hh * hd, w, n, r.start, r.start + n, hd, probs.data(),
               att.data() + row0[i] * w + hh * hd, w);
      }
    }
    Linear(att.data(), p + bl.proj.offset, n_rows, w, w, x.data(), /*accumulate=*/true);
    LayerNorm(x.data(), p + bl.ln2_gain.offset, p + bl.ln2_bias.offset, n_rows, w, h.data(), nullptr);
    Linear(h.data(), p + bl.fc.offset, n_rows, w, 4 * w, fc.data());
    for (float& f : fc) f = Gelu(f);
    Linear(fc.data(), p + bl.fc_proj.offset, n_rows, 4 * w, w, x.data(), /*accumulate=*/true);
  }
  const int count = static_cast<int>(runs.size());
  std::vector<float> last(size_t(count) * w), logits(size_t(count) * c.vocab);
  for (size_t i = 0; i < runs.size(); ++i) {
    const float* xr = x.data() + (row0[i] + runs[i].tokens.size() - 1) * w;
    std::copy(xr, xr + w, last.data() + i * w);
  }
  LayerNorm(last.data(), p + layout_.lnf_gain.offset, p + layout_.lnf_bias.offset, count, w, h.data(), nullptr);
  Linear(h.data(), p + layout_.wte.offset, count, w, c.vocab, logits.data());
  return logits;
}

std::vector<int32_t> HostModel::Greedy(const int32_t* prompt, int batch, int prompt_len, int steps) {
  Require(steps >= 0, "steps must not be negative");
  Require(steps == 0 || prompt_len + steps - 1 <= config_.seq,
          "prompt_len + steps - 1 must not exceed config.seq");
  std::vector<int32_t> out(size_t(batch) * steps);
  std::vector<float> logits = Prefill(prompt, batch, prompt_len);
  std::vector<int32_t> next(batch);
  for (int s = 0; s < steps; ++s) {
    if (s > 0) logits = Decode(next.data());
    for (int b = 0; b < batch; ++b) {
      next[b] = Argmax(logits.data() + size_t(b) * config_.vocab, config_.vocab);
      out[size_t(b) * steps + s] = next[b];
    }
  }
  return out;
}

std::vector<float> HostModel::Logits(const int32_t* inputs, int batch, int seq) {
  CheckBatch(inputs, batch, seq);
  Activations a;
  RunForward(a, inputs, batch, seq);
  return std::move(a.logits);
}

int Argmax(const float* values, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) {
    if (values[i] > values[best]) best = i;
  }
  return best;
}

}  // namespace perfgate::suites::transformer
