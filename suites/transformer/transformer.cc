#include "suites/transformer/transformer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"

#include "suites/seed.h"

namespace perfgate::suites::transformer {
namespace {

// A uniform in (0, 1) that depends only on (seed, stream, index).
double Uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t h = SplitMix64(SplitMix64(seed ^ (stream * 0xd6e8feb86659fd93ull)) + index);
  return (double(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);  // 53 bits
}

// A standard normal that depends only on (seed, index): Box-Muller.
double Normal(uint64_t seed, uint64_t index) {
  const double u1 = Uniform(seed, 1, index), u2 = Uniform(seed, 2, index);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

Tensor Take(size_t& at, int rows, int cols = 1) {
  Tensor t{at, rows, cols};
  at += t.size();
  return t;
}

}  // namespace

const std::vector<std::string>& PresetNames() {
  static const std::vector<std::string> names = {"tiny", "small", "medium", "large"};
  return names;
}

std::optional<Config> Preset(const std::string& name) {
  // layers, width, heads, seq, batch, vocab
  static const std::map<std::string, Config> presets = {
      {"tiny", {2, 64, 4, 32, 4, 256}},              // 0.1 M parameters: tests, host CI
      {"small", {6, 512, 8, 512, 8, 8192}},          // 23 M: the quick GPU case
      {"medium", {12, 1024, 16, 1024, 8, 32768}},    // 185 M
      {"large", {24, 2048, 16, 2048, 4, 50304}},     // 1.3 B: about 50 GB to train
  };
  auto it = presets.find(name);
  if (it == presets.end()) return std::nullopt;
  return it->second;
}

std::string Validate(const Config& c) {
  if (c.layers <= 0) return "layers must be positive";
  if (c.width <= 0) return "width must be positive";
  if (c.heads <= 0) return "heads must be positive";
  if (c.seq <= 0) return "seq must be positive";
  if (c.batch <= 0) return "batch must be positive";
  if (c.vocab <= 0) return "vocab must be positive";
  if (c.width % 8 != 0) return "width must be a multiple of 8";
  if (c.width % c.heads != 0) return "width must be a multiple of heads";
  if (c.head_dim() % 2 != 0 || c.head_dim() > 256) return "width / heads must be even and at most 256";
  return "";
}

Layout MakeLayout(const Config& c) {
  Layout l;
  size_t at = 0;
  l.wte = Take(at, c.vocab, c.width);
  l.wpe = Take(at, c.seq, c.width);
  l.lnf_gain = Take(at, c.width);
  l.lnf_bias = Take(at, c.width);
  for (int i = 0; i < c.layers; ++i) {
    BlockLayout b;
    b.begin = at;
    b.ln1_gain = Take(at, c.width);
    b.ln1_bias = Take(at, c.width);
    b.qkv = Take(at, 3 * c.width, c.width);
    b.proj = Take(at, c.width, c.width);
    b.ln2_gain = Take(at, c.width);
    b.ln2_bias = Take(at, c.width);
    b.fc = Take(at, c.ffn(), c.width);
    b.fc_proj = Take(at, c.width, c.ffn());
    b.end = at;
    l.blocks.push_back(b);
  }
  l.total = at;
  return l;
}

int64_t ParameterCount(const Config& c) { return static_cast<int64_t>(MakeLayout(c).total); }

double ForwardFlops(const Config& c, int64_t batch, int64_t seq) {
  const double d = c.width, tokens = double(batch) * double(seq);
  const double block_params = 12.0 * d * d;  // qkv 3d², proj d², fc 4d², fc_proj 4d²
  const double matmul = 2.0 * tokens * (c.layers * block_params + d * c.vocab);
  const double attention = 4.0 * tokens * double(seq) * d * c.layers;  // QKᵀ and PV
  return matmul + attention;
}

double TrainingStepFlops(const Config& c) { return 3.0 * ForwardFlops(c, c.batch, c.seq); }

double TrainingBytes(const Config& c) {
  const double params = double(ParameterCount(c));
  const double tokens = double(c.tokens());
  const double states = 18.0 * params;  // fp32 master, grad, m, v; bf16 copy
  const double activations = 30.0 * c.width * tokens * c.layers;
  const double probs = 2.0 * double(c.batch) * c.heads * double(c.seq) * c.seq * c.layers;
  const double logits = 6.0 * tokens * c.vocab;
  return states + activations + probs + logits;
}

std::vector<float> InitParameters(const Config& c, uint64_t seed) {
  const Layout l = MakeLayout(c);
  std::vector<float> p(l.total, 0.0f);
  auto normal = [&](const Tensor& t, double std) {
    for (size_t i = 0; i < t.size(); ++i) {
      p[t.offset + i] = static_cast<float>(std * Normal(seed, t.offset + i));
    }
  };
  auto fill = [&](const Tensor& t, float v) {
    for (size_t i = 0; i < t.size(); ++i) p[t.offset + i] = v;
  };
  const double residual_std = 0.02 / std::sqrt(2.0 * c.layers);
  normal(l.wte, 0.02);
  normal(l.wpe, 0.02);
  fill(l.lnf_gain, 1.0f);
  for (const BlockLayout& b : l.blocks) {
    fill(b.ln1_gain, 1.0f);
    fill(b.ln2_gain, 1.0f);
    normal(b.qkv, 0.02);
    normal(b.proj, residual_std);
    normal(b.fc, 0.02);
    normal(b.fc_proj, residual_std);
  }
  return p;
}

std::vector<int32_t> SyntheticTokens(int64_t count, int vocab, uint64_t seed) {
  std::vector<int32_t> t(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    t[size_t(i)] = static_cast<int32_t>(SplitMix64(SplitMix64(seed) + uint64_t(i)) % uint64_t(vocab));
  }
  return t;
}

void SplitBatch(const std::vector<int32_t>& tokens, int batch, int seq, std::vector<int32_t>* inputs,
                std::vector<int32_t>* targets) {
  inputs->resize(size_t(batch) * seq);
  targets->resize(size_t(batch) * seq);
  for (int b = 0; b < batch; ++b) {
    for (int t = 0; t < seq; ++t) {
      (*inputs)[size_t(b) * seq + t] = tokens[size_t(b) * (seq + 1) + t];
      (*targets)[size_t(b) * seq + t] = tokens[size_t(b) * (seq + 1) + t + 1];
    }
  }
}

std::vector<uint8_t> DecayMask(const Config& c) {
  const Layout l = MakeLayout(c);
  std::vector<uint8_t> mask(l.total, 0);
  auto on = [&](const Tensor& t) {
    for (size_t i = 0; i < t.size(); ++i) mask[t.offset + i] = 1;
  };
  on(l.wte);
  on(l.wpe);
  for (const BlockLayout& b : l.blocks) {
    on(b.qkv);
    on(b.proj);
    on(b.fc);
    on(b.fc_proj);
  }
  return mask;
}

void AdamWUpdate(const AdamW& hp, int t, size_t n, float* params, const float* grads, float* m,
                 float* v, const uint8_t* decay) {
  const float c1 = 1.0f - std::pow(hp.beta1, float(t));
  const float c2 = 1.0f - std::pow(hp.beta2, float(t));
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    m[i] = hp.beta1 * m[i] + (1.0f - hp.beta1) * g;
    v[i] = hp.beta2 * v[i] + (1.0f - hp.beta2) * g * g;
    const float update = (m[i] / c1) / (std::sqrt(v[i] / c2) + hp.eps);
    params[i] -= hp.lr * (update + (decay[i] ? hp.weight_decay * params[i] : 0.0f));
  }
}

float Gelu(float x) {
  const float k = 0.7978845608028654f;  // sqrt(2/pi)
  return 0.5f * x * (1.0f + std::tanh(k * (x + 0.044715f * x * x * x)));
}

float GeluGrad(float x) {
  const float k = 0.7978845608028654f;
  const float u = k * (x + 0.044715f * x * x * x);
  const float th = std::tanh(u);
  const float du = k * (1.0f + 3.0f * 0.044715f * x * x);
  return 0.5f * (1.0f + th) + 0.5f * x * (1.0f - th * th) * du;
}

std::string CheckSlotRuns(const std::vector<SlotRun>& runs, int slots, int seq, int vocab) {
  if (runs.empty()) return "a step needs at least one run";
  std::vector<char> used(static_cast<size_t>(std::max(slots, 0)), 0);
  for (size_t i = 0; i < runs.size(); ++i) {
    const SlotRun& r = runs[i];
    const int64_t n = static_cast<int64_t>(r.tokens.size());
    if (r.slot < 0 || r.slot >= slots) {
      return absl::StrCat("run ", i, ": slot ", r.slot, " is outside the cache's ", slots, " slots");
    }
    if (used[r.slot]++ != 0) return absl::StrCat("run ", i, ": slot ", r.slot, " has a run already");
    if (n == 0 || r.start < 0 || r.start + n > seq) {
      return absl::StrCat("run ", i, ": positions [", r.start, ", ", r.start + n, ") are empty or outside [0, ",
                          seq, ")");
    }
    for (size_t t = 0; t < r.tokens.size(); ++t) {
      if (r.tokens[t] < 0 || r.tokens[t] >= vocab) {
        return absl::StrCat("run ", i, ": token ", r.tokens[t], " at index ", t, " is outside [0, ", vocab, ")");
      }
    }
  }
  return "";
}

SlotRows FlattenSlotRuns(const std::vector<SlotRun>& runs) {
  SlotRows rows;
  for (const SlotRun& r : runs) {
    for (size_t t = 0; t < r.tokens.size(); ++t) {
      rows.tokens.push_back(r.tokens[t]);
      rows.slots.push_back(r.slot);
      rows.positions.push_back(r.start + static_cast<int32_t>(t));
    }
    rows.last.push_back(static_cast<int32_t>(rows.tokens.size()) - 1);
  }
  return rows;
}

}  // namespace perfgate::suites::transformer
