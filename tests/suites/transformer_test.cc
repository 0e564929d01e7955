#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "suites/transformer/transformer.h"
#include "suites/transformer/host_model.h"

namespace perfgate::suites::transformer {
namespace {

Config Tiny() { return *Preset("tiny"); }

// Smaller than tiny, for the finite-difference check: 2 layers, width 32, 4
// heads of 8, 8 positions, batch 2, vocabulary 64.
Config Tinier() { return Config{2, 32, 4, 8, 2, 64}; }

struct Batch {
  std::vector<int32_t> inputs, targets;
};

Batch SyntheticBatch(const Config& c, int batch, uint64_t seed) {
  Batch b;
  SplitBatch(SyntheticTokens(int64_t(batch) * (c.seq + 1), c.vocab, seed), batch, c.seq, &b.inputs,
             &b.targets);
  return b;
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float worst = 0.0f;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

float MaxAbs(const std::vector<float>& a) {
  float worst = 0.0f;
  for (float x : a) worst = std::max(worst, std::abs(x));
  return worst;
}

// ---- configuration ----

TEST(ModelConfig, EveryPresetIsValid) {
  for (const std::string& name : PresetNames()) {
    std::optional<Config> c = Preset(name);
    ASSERT_TRUE(c.has_value()) << name;
    EXPECT_EQ(Validate(*c), "") << name;
  }
  EXPECT_FALSE(Preset("huge").has_value());
}

TEST(ModelConfig, ValidateNamesTheProblem) {
  Config c = Tiny();
  c.heads = 3;  // 64 % 3 != 0
  EXPECT_NE(Validate(c).find("multiple of heads"), std::string::npos) << Validate(c);
  c = Tiny();
  c.layers = 0;
  EXPECT_NE(Validate(c).find("layers"), std::string::npos) << Validate(c);
  c = Tiny();
  c.width = 36;
  EXPECT_NE(Validate(c).find("multiple of 8"), std::string::npos) << Validate(c);
  c = Tiny();
  c.heads = 64;  // head_dim 1: odd
  EXPECT_NE(Validate(c).find("even"), std::string::npos) << Validate(c);
}

TEST(ModelConfig, ParameterCountMatchesClosedForm) {
  for (const std::string& name : PresetNames()) {
    const Config c = *Preset(name);
    const int64_t V = c.vocab, S = c.seq, w = c.width, L = c.layers;
    EXPECT_EQ(ParameterCount(c), V * w + S * w + 2 * w + L * (4 * w + 12 * w * w)) << name;
  }
}

TEST(ModelConfig, LayoutRangesAreContiguousAndCoverEverything) {
  const Config c = Tiny();
  const Layout l = MakeLayout(c);
  size_t at = 0;
  auto next = [&](const Tensor& t, int rows, int cols) {
    EXPECT_EQ(t.offset, at);
    EXPECT_EQ(t.rows, rows);
    EXPECT_EQ(t.cols, cols);
    at += t.size();
  };
  next(l.wte, c.vocab, c.width);
  next(l.wpe, c.seq, c.width);
  next(l.lnf_gain, c.width, 1);
  next(l.lnf_bias, c.width, 1);
  ASSERT_EQ(l.blocks.size(), size_t(c.layers));
  for (const BlockLayout& b : l.blocks) {
    EXPECT_EQ(b.begin, at);
    next(b.ln1_gain, c.width, 1);
    next(b.ln1_bias, c.width, 1);
    next(b.qkv, 3 * c.width, c.width);
    next(b.proj, c.width, c.width);
    next(b.ln2_gain, c.width, 1);
    next(b.ln2_bias, c.width, 1);
    next(b.fc, 4 * c.width, c.width);
    next(b.fc_proj, c.width, 4 * c.width);
    EXPECT_EQ(b.end, at);
  }
  EXPECT_EQ(l.total, at);
}

TEST(ModelConfig, LargeNeedsAGoodPartOfAn80GBCard) {
  const double bytes = TrainingBytes(*Preset("large"));
  EXPECT_GT(bytes, 30e9);
  EXPECT_LT(bytes, 80e9);
}

TEST(ModelConfig, ForwardFlopsOfTinyMatchAHandCount) {
  // tiny: 2 layers, width 64, seq 32, batch 4 (128 tokens), vocab 256.
  // Matrices: 2 · 128 · (2 · 12 · 64² + 64 · 256) = 29,360,128.
  // Attention scores and values: 4 · 128 · 32 · 64 · 2 = 2,097,152.
  EXPECT_DOUBLE_EQ(ForwardFlops(Tiny(), 4, 32), 31457280.0);
  EXPECT_DOUBLE_EQ(TrainingStepFlops(Tiny()), 3.0 * 31457280.0);
}

TEST(ModelConfig, InitialisationIsDeterministicPerSeed) {
  const Config c = Tiny();
  const std::vector<float> a = InitParameters(c, 7), b = InitParameters(c, 7), d = InitParameters(c, 8);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == d);
  const Layout l = MakeLayout(c);
  double sum = 0.0, sum2 = 0.0;
  for (size_t i = 0; i < l.wte.size(); ++i) {
    sum += a[l.wte.offset + i];
    sum2 += double(a[l.wte.offset + i]) * a[l.wte.offset + i];
  }
  const double n = double(l.wte.size()), mean = sum / n;
  const double std = std::sqrt(sum2 / n - mean * mean);
  EXPECT_NEAR(std, 0.02, 0.02 * 0.03);
  EXPECT_NEAR(mean, 0.0, 0.001);
  EXPECT_EQ(a[l.lnf_gain.offset], 1.0f);
  EXPECT_EQ(a[l.blocks[0].ln1_bias.offset], 0.0f);
}

// ---- the host model ----

TEST(SlotRuns, CheckNamesTheRunThatCannotBeAStep) {
  const std::vector<SlotRun> good = {{0, 0, {1, 2, 3}}, {2, 7, {4}}};
  EXPECT_EQ(CheckSlotRuns(good, 3, 8, 16), "");
  EXPECT_EQ(CheckSlotRuns({}, 3, 8, 16), "a step needs at least one run");
  EXPECT_EQ(CheckSlotRuns({{0, 0, {1}}, {3, 0, {1}}}, 3, 8, 16), "run 1: slot 3 is outside the cache's 3 slots");
  EXPECT_EQ(CheckSlotRuns({{1, 0, {1}}, {1, 4, {1}}}, 3, 8, 16), "run 1: slot 1 has a run already");
  EXPECT_EQ(CheckSlotRuns({{0, 6, {1, 2, 3}}}, 3, 8, 16), "run 0: positions [6, 9) are empty or outside [0, 8)");
  EXPECT_EQ(CheckSlotRuns({{0, 0, {}}}, 3, 8, 16), "run 0: positions [0, 0) are empty or outside [0, 8)");
  EXPECT_EQ(CheckSlotRuns({{0, 0, {1, 16}}}, 3, 8, 16), "run 0: token 16 at index 1 is outside [0, 16)");
}

TEST(SlotRuns, FlattenGivesEveryTokenItsSlotAndPositionAndEachRunsLastRow) {
  const SlotRows rows = FlattenSlotRuns({{2, 0, {5, 6, 7}}, {0, 9, {8}}, {1, 3, {9, 10}}});
  EXPECT_EQ(rows.tokens, (std::vector<int32_t>{5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(rows.slots, (std::vector<int32_t>{2, 2, 2, 0, 1, 1}));
  EXPECT_EQ(rows.positions, (std::vector<int32_t>{0, 1, 2, 9, 3, 4}));
  EXPECT_EQ(rows.last, (std::vector<int32_t>{2, 3, 5}));
}

TEST(HostModel, InitialLossIsCloseToLogVocab) {
  const Config c = Tiny();
  HostModel model(c, InitParameters(c, 1));
  const Batch b = SyntheticBatch(c, c.batch, 2);
  const float loss = model.Forward(b.inputs.data(), b.targets.data(), c.batch, c.seq);
  EXPECT_NEAR(loss, std::log(float(c.vocab)), 0.1);
}

// Parameters far from the initial scale, so every term of the backward pass
// carries weight: attention is far from uniform (a wrong softmax backward
// shows), norm gains and biases are not 1 and 0.
std::vector<float> RoughParameters(const Config& c, uint64_t seed) {
  const Layout l = MakeLayout(c);
  std::vector<float> p(l.total);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& x : p) x = 0.3f * normal(rng);
  auto around_one = [&](const Tensor& t) {
    for (size_t i = 0; i < t.size(); ++i) p[t.offset + i] += 1.0f;
  };
  around_one(l.lnf_gain);
  for (const BlockLayout& b : l.blocks) {
    around_one(b.ln1_gain);
    around_one(b.ln2_gain);
  }
  return p;
}

TEST(HostModel, BackwardMatchesFiniteDifferencesForEveryTensor) {
  const Config c = Tinier();
  HostModel model(c, RoughParameters(c, 3));
  const Batch b = SyntheticBatch(c, c.batch, 4);
  model.Forward(b.inputs.data(), b.targets.data(), c.batch, c.seq);
  model.Backward();
  const std::vector<float> grads = model.grads();

  // Central differences of the fp32 loss with h = 1e-2 (parameters are of
  // order 0.3 to 1): fp32 rounding of the loss (about 4, ulp 5e-7, plus the
  // forward's accumulated error) divided by 2h gives noise of order 1e-5 to
  // 1e-4, and the h² truncation error stays below that here (largest
  // difference seen: 1.2e-4). The tolerance, 3e-4 + 1% of the gradient, sits
  // above both and well below the error of a wrong term: the sampled
  // gradients of every tensor reach at least 2e-3, and a dropped
  // softmax-backward term or a transposed product is off by tens of percent.
  const float h = 1e-2f;
  auto loss_at = [&](size_t i, float value) {
    const float saved = model.params()[i];
    model.params()[i] = value;
    const float loss = model.Forward(b.inputs.data(), b.targets.data(), c.batch, c.seq);
    model.params()[i] = saved;
    return double(loss);
  };

  const Layout l = model.layout();
  std::vector<std::pair<std::string, Tensor>> kinds = {
      {"wte", l.wte}, {"wpe", l.wpe}, {"lnf_gain", l.lnf_gain}, {"lnf_bias", l.lnf_bias}};
  for (size_t k = 0; k < l.blocks.size(); ++k) {
    const BlockLayout& bl = l.blocks[k];
    const std::string p = "block" + std::to_string(k) + ".";
    const size_t wsz = size_t(c.width) * c.width;
    kinds.push_back({p + "ln1_gain", bl.ln1_gain});
    kinds.push_back({p + "ln1_bias", bl.ln1_bias});
    kinds.push_back({p + "qkv.Q", Tensor{bl.qkv.offset, c.width, c.width}});
    kinds.push_back({p + "qkv.K", Tensor{bl.qkv.offset + wsz, c.width, c.width}});
    kinds.push_back({p + "qkv.V", Tensor{bl.qkv.offset + 2 * wsz, c.width, c.width}});
    kinds.push_back({p + "proj", bl.proj});
    kinds.push_back({p + "ln2_gain", bl.ln2_gain});
    kinds.push_back({p + "ln2_bias", bl.ln2_bias});
    kinds.push_back({p + "fc", bl.fc});
    kinds.push_back({p + "fc_proj", bl.fc_proj});
  }

  constexpr int kSamples = 12;
  std::mt19937_64 rng(5);
  int checked = 0;
  for (const auto& [name, t] : kinds) {
    std::vector<size_t> picks;
    std::uniform_int_distribution<size_t> pick(0, t.size() - 1);
    for (int s = 0; s < kSamples; ++s) picks.push_back(t.offset + pick(rng));
    // wte also gets gradient through the lookup: sample a row that is an input.
    if (name == "wte") picks.push_back(t.offset + size_t(b.inputs[3]) * c.width + 5);
    double largest = 0.0;
    for (size_t i : picks) {
      const float p = model.params()[i];
      const double fd = (loss_at(i, p + h) - loss_at(i, p - h)) / (2.0 * h);
      largest = std::max(largest, std::abs(fd));
      EXPECT_NEAR(grads[i], fd, 3e-4 + 0.01 * std::abs(fd)) << name << " at flat index " << i;
      ++checked;
    }
    // The sample must exercise the tensor, or the comparison shows nothing.
    EXPECT_GT(largest, 2e-3) << name << ": gradients too small to check";
  }
  EXPECT_EQ(checked, int(kinds.size()) * kSamples + 1);
}

TEST(HostModel, ReadyRangesArriveBlocksLastFirstThenEmbeddingsAndLeaveGradientsUnchanged) {
  const Config c = Tiny();
  HostModel model(c, InitParameters(c, 1));
  const Batch b = SyntheticBatch(c, c.batch, 2);
  model.Forward(b.inputs.data(), b.targets.data(), c.batch, c.seq);
  model.Backward();
  const std::vector<float> plain = model.grads();

  std::vector<std::pair<size_t, size_t>> ranges;
  std::vector<float> snapshot(plain.size(), 0.0f);
  // Stale gradients that differ from the new ones, so a range handed over
  // before its last write shows in the snapshot.
  std::fill(model.grads().begin(), model.grads().end(), 1e30f);
  model.Forward(b.inputs.data(), b.targets.data(), c.batch, c.seq);
  model.Backward([&](size_t begin, size_t end) {
    ranges.emplace_back(begin, end);
    // What an all-reduce would read at this moment.
    std::copy(model.grads().begin() + begin, model.grads().begin() + end, snapshot.begin() + begin);
  });

  const Layout& l = model.layout();
  ASSERT_EQ(ranges.size(), size_t(c.layers) + 1);
  for (int i = 0; i < c.layers; ++i) {
    const BlockLayout& bl = l.blocks[c.layers - 1 - i];
    EXPECT_EQ(ranges[i], std::make_pair(bl.begin, bl.end)) << "call " << i;
  }
  EXPECT_EQ(ranges.back(), std::make_pair(size_t{0}, l.blocks[0].begin));
  std::vector<int> covered(l.total, 0);
  for (const auto& [begin, end] : ranges) {
    for (size_t i = begin; i < end; ++i) ++covered[i];
  }
  EXPECT_EQ(std::count(covered.begin(), covered.end(), 1), int64_t(l.total));
  // Deterministic arithmetic: identical to the run without a callback, and
  // nothing written after its range was handed over.
  EXPECT_TRUE(model.grads() == plain);
  EXPECT_TRUE(snapshot == plain);
}

TEST(HostModel, AdamWStepMatchesTheUpdateByHand) {
  const Config c = Tiny();
  HostModel model(c, InitParameters(c, 1));
  const Layout& l = model.layout();
  const size_t matrix = l.blocks[0].fc.offset + 17;  // decayed
  const size_t gain = l.blocks[1].ln2_gain.offset + 3;  // not decayed
  std::fill(model.grads().begin(), model.grads().end(), 0.0f);
  model.grads()[matrix] = 0.5f;
  model.grads()[gain] = -0.25f;
  const float p_matrix = model.params()[matrix], p_gain = model.params()[gain];
  const float untouched = model.params()[l.blocks[0].proj.offset];

  AdamW hp;
  hp.lr = 1e-2f;
  hp.weight_decay = 0.1f;
  model.Step(hp);
  // Step 1: m̂ = g and v̂ = g², so the update is lr · (sign(g) + wd · p) (decay only on matrices).
  EXPECT_NEAR(model.params()[matrix], p_matrix - hp.lr * (1.0f + hp.weight_decay * p_matrix), 1e-6);
  EXPECT_NEAR(model.params()[gain], p_gain + hp.lr, 1e-6);
  // A zero gradient leaves a matrix only decayed.
  EXPECT_NEAR(model.params()[l.blocks[0].proj.offset], untouched * (1.0f - hp.lr * hp.weight_decay),
              1e-9);

  // Step 2 with a new gradient, by the formula.
  const float p1 = model.params()[matrix];
  model.grads()[matrix] = -1.0f;
  model.Step(hp);
  const double m = 0.9 * (0.1 * 0.5) + 0.1 * -1.0;
  const double v = 0.95 * (0.05 * 0.25) + 0.05 * 1.0;
  const double update = (m / (1 - 0.81)) / (std::sqrt(v / (1 - 0.9025)) + 1e-8);
  EXPECT_NEAR(model.params()[matrix], p1 - 1e-2 * (update + 0.1 * p1), 1e-6);
}

TEST(HostModel, TrainingReducesTheLossEveryStep) {
  const Config c = Tiny();
  HostModel model(c, InitParameters(c, 1));
  const Batch b = SyntheticBatch(c, c.batch, 9);
  AdamW hp;
  hp.lr = 1e-3f;
  std::vector<float> losses;
  for (int step = 0; step < 5; ++step) {
    losses.push_back(model.Forward(b.inputs.data(), b.targets.data(), c.batch, c.seq));
    model.Backward();
    model.Step(hp);
  }
  losses.push_back(model.Forward(b.inputs.data(), b.targets.data(), c.batch, c.seq));
  for (size_t i = 1; i < losses.size(); ++i) EXPECT_LT(losses[i], losses[i - 1]) << "step " << i;
  EXPECT_LT(losses.back(), losses.front() - 0.1f);
}

TEST(HostModel, PrefillAndDecodeComputeTheSameLogitsAsAFullForward) {
  const Config c = Tiny();
  HostModel model(c, RoughParameters(c, 11));
  const int batch = 3, prompt = 5, decode = 6, total = prompt + decode;
  const std::vector<int32_t> tokens = SyntheticTokens(int64_t(batch) * total, c.vocab, 12);
  const std::vector<float> full = model.Logits(tokens.data(), batch, total);
  auto full_at = [&](int b, int t) {
    const float* row = full.data() + (size_t(b) * total + t) * c.vocab;
    return std::vector<float>(row, row + c.vocab);
  };
  auto rows = [&](const std::vector<float>& logits, int b) {
    return std::vector<float>(logits.begin() + size_t(b) * c.vocab,
                              logits.begin() + size_t(b + 1) * c.vocab);
  };

  std::vector<int32_t> head(size_t(batch) * prompt);
  for (int b = 0; b < batch; ++b) {
    std::copy_n(tokens.begin() + size_t(b) * total, prompt, head.begin() + size_t(b) * prompt);
  }
  std::vector<float> logits = model.Prefill(head.data(), batch, prompt);
  EXPECT_EQ(model.position(), prompt);
  for (int b = 0; b < batch; ++b) EXPECT_LT(MaxAbsDiff(rows(logits, b), full_at(b, prompt - 1)), 1e-4);
  for (int t = prompt; t < total; ++t) {
    std::vector<int32_t> next(batch);
    for (int b = 0; b < batch; ++b) next[b] = tokens[size_t(b) * total + t];
    logits = model.Decode(next.data());
    EXPECT_EQ(model.position(), t + 1);
    for (int b = 0; b < batch; ++b) {
      EXPECT_LT(MaxAbsDiff(rows(logits, b), full_at(b, t)), 1e-4) << "sequence " << b << " position " << t;
    }
  }
  // The logits are not all alike, or the comparison would show nothing.
  EXPECT_GT(MaxAbsDiff(full_at(0, 1), full_at(1, 1)), 1e-2);
}

TEST(HostModel, GreedyPicksTheArgmaxOfAFullForwardEachStep) {
  const Config c = Tiny();
  HostModel model(c, RoughParameters(c, 13));
  const int batch = 2, prompt = 4, steps = 8;
  const std::vector<int32_t> start = SyntheticTokens(int64_t(batch) * prompt, c.vocab, 14);
  const std::vector<int32_t> greedy = model.Greedy(start.data(), batch, prompt, steps);
  ASSERT_EQ(greedy.size(), size_t(batch) * steps);

  std::vector<std::vector<int32_t>> seqs(batch);
  for (int b = 0; b < batch; ++b) seqs[b].assign(start.begin() + b * prompt, start.begin() + (b + 1) * prompt);
  for (int s = 0; s < steps; ++s) {
    for (int b = 0; b < batch; ++b) {
      const int len = int(seqs[b].size());
      const std::vector<float> logits = model.Logits(seqs[b].data(), 1, len);
      const int expected = Argmax(logits.data() + size_t(len - 1) * c.vocab, c.vocab);
      EXPECT_EQ(greedy[size_t(b) * steps + s], expected) << "sequence " << b << " step " << s;
      seqs[b].push_back(expected);
    }
  }
}

TEST(HostModel, ArgmaxTakesTheLowestIndexOnTies) {
  const std::vector<float> v = {0.5f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(Argmax(v.data(), 4), 1);
}

TEST(HostModelDeathTest, DecodePastTheLastPositionAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Config c = Tiny();
  c.seq = 4;
  HostModel model(c, InitParameters(c, 1));
  const std::vector<int32_t> prompt = {1, 2, 3};
  model.Prefill(prompt.data(), 1, 3);
  const int32_t token = 4;
  model.Decode(&token);  // position 3, the last
  EXPECT_DEATH(model.Decode(&token), "past config.seq");
}

TEST(HostModelDeathTest, ATokenOutsideTheVocabularyAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const Config c = Tiny();
  HostModel model(c, InitParameters(c, 1));
  const std::vector<int32_t> prompt = {1, c.vocab};
  EXPECT_DEATH(model.Prefill(prompt.data(), 1, 2), "outside \\[0, 256\\)");
}

TEST(HostModel, GradientOfABatchIsTheMeanOfItsHalves) {
  // What data-parallel training relies on: two ranks with b sequences each,
  // their gradients averaged, equal one rank with all 2b.
  const Config c = Tiny();
  const int half = c.batch / 2;
  HostModel model(c, RoughParameters(c, 21));
  const Batch b = SyntheticBatch(c, c.batch, 22);
  const size_t split = size_t(half) * c.seq;

  const float loss_all = model.Forward(b.inputs.data(), b.targets.data(), c.batch, c.seq);
  model.Backward();
  const std::vector<float> all = model.grads();
  const float loss_1 = model.Forward(b.inputs.data(), b.targets.data(), half, c.seq);
  model.Backward();
  const std::vector<float> first = model.grads();
  const float loss_2 = model.Forward(b.inputs.data() + split, b.targets.data() + split, half, c.seq);
  model.Backward();
  std::vector<float> mean = model.grads();
  for (size_t i = 0; i < mean.size(); ++i) mean[i] = 0.5f * (first[i] + mean[i]);

  EXPECT_NEAR(loss_all, 0.5f * (loss_1 + loss_2), 1e-5);
  // fp32 sums in a different order: relative to the largest gradient.
  EXPECT_LT(MaxAbsDiff(all, mean), 1e-5f * MaxAbs(all));
  // The halves differ, so their mean is a real check.
  EXPECT_GT(MaxAbsDiff(first, all), 1e-2f * MaxAbs(all));
}

}  // namespace
}  // namespace perfgate::suites::transformer

namespace perfgate::suites::transformer {
namespace {

// An independent implementation: scripts/model-reference.py (PyTorch 1.13.1,
// fp32 on the CPU, autograd and torch.optim.AdamW) on the same weights and
// batch (`check --preset tiny --seed 1`: InitParameters(tiny, 1),
// SyntheticTokens(4 x 33, 256, 1)) printed these losses, initially and after
// each of 5 AdamW steps with config.h's defaults. Our forward, backward and
// optimizer must reproduce them to fp32 rounding over 5 steps.
TEST(HostModel, TrainsLikeThePyTorchReferenceOnTheTinyPreset) {
  const double kTorchLosses[] = {5.596531, 5.339922, 5.137546, 4.983205, 4.861527, 4.759796};
  const Config c = *Preset("tiny");
  HostModel m(c, InitParameters(c, 1));
  std::vector<int32_t> inputs, targets;
  SplitBatch(SyntheticTokens(int64_t{c.batch} * (c.seq + 1), c.vocab, 1), c.batch, c.seq, &inputs, &targets);
  const AdamW hp;
  for (int step = 0; step <= 5; ++step) {
    const float loss = m.Forward(inputs.data(), targets.data(), c.batch, c.seq);
    EXPECT_NEAR(loss, kTorchLosses[step], 2e-5) << "after " << step << " steps";
    m.Backward();
    m.Step(hp);
  }
}

}  // namespace
}  // namespace perfgate::suites::transformer
