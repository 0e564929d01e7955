// The CUDA backend against the fp32 host backend: same parameters (same
// InitParameters seed), same SyntheticTokens batch. The CUDA side computes
// in bf16 with fp32 accumulation, so every comparison has a tolerance; each
// is stated where it is used, with the reason. Without a device every test
// skips with the runtime's reason.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "suites/cuda/visible_devices.h"
#include "suites/transformer/transformer.h"
#include "suites/transformer/cuda_model.h"
#include "suites/transformer/host_model.h"

namespace perfgate::suites::transformer::cuda {
namespace {

constexpr uint64_t kParamSeed = 1234;
constexpr uint64_t kTokenSeed = 99;

// bf16 keeps 8 significant bits (relative rounding 2^-9 ≈ 2e-3 per value);
// the loss is a mean of logsumexps of logits that went through bf16 weights
// and activations in every layer, so a few tenths of a percent of error is
// expected and 2% is a bug.
constexpr double kLossRelTol = 2e-2;
// Per tensor, the gradient's relative L2 error; bf16 activations and
// d(logits) compound through the backward pass, 5% leaves room for that and
// still fails on any wrong stride, transpose or missing term (those give
// errors of order 1).
constexpr double kGradRelL2 = 5e-2;
constexpr double kGradCosine = 0.99;

// The small preset at batch 2 keeps the host reference to seconds while
// exercising the real shapes (width 512, 8 heads, 512 positions, 8192 vocab).
Config Named(const std::string& name) {
  Config c = *Preset(name);
  if (name == "small") c.batch = 2;
  return c;
}

// The model's tensors by name, for messages.
std::vector<std::pair<std::string, Tensor>> Tensors(const Layout& l) {
  std::vector<std::pair<std::string, Tensor>> t = {
      {"wte", l.wte}, {"wpe", l.wpe}, {"lnf_gain", l.lnf_gain}, {"lnf_bias", l.lnf_bias}};
  for (size_t i = 0; i < l.blocks.size(); ++i) {
    const BlockLayout& b = l.blocks[i];
    const std::string p = "block" + std::to_string(i) + ".";
    t.insert(t.end(), {{p + "ln1_gain", b.ln1_gain}, {p + "ln1_bias", b.ln1_bias}, {p + "qkv", b.qkv},
                       {p + "proj", b.proj}, {p + "ln2_gain", b.ln2_gain}, {p + "ln2_bias", b.ln2_bias},
                       {p + "fc", b.fc}, {p + "fc_proj", b.fc_proj}});
  }
  return t;
}

struct Comparison {
  double rel_l2 = 0;  // ‖got − want‖ / ‖want‖
  double cosine = 1;
};

Comparison Compare(const float* got, const float* want, size_t n) {
  double diff = 0, gg = 0, ww = 0, gw = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = double(got[i]) - double(want[i]);
    diff += d * d;
    gg += double(got[i]) * got[i];
    ww += double(want[i]) * want[i];
    gw += double(got[i]) * want[i];
  }
  Comparison c;
  c.rel_l2 = ww > 0 ? std::sqrt(diff / ww) : std::sqrt(diff);
  c.cosine = gg > 0 && ww > 0 ? gw / std::sqrt(gg * ww) : (gg == ww ? 1.0 : 0.0);
  return c;
}

// A GPU model, or a skip with the reason when there is no device.
#define PERFGATE_SKIP_WITHOUT_DEVICE()                                                 \
  do {                                                                                 \
    const absl::StatusOr<int> visible = perfgate::cuda::VisibleDevices();              \
    if (!visible.ok()) GTEST_SKIP() << visible.status().message();                     \
  } while (0)

class CudaModelVsHost : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    PERFGATE_SKIP_WITHOUT_DEVICE();
    config_ = Named(GetParam());
    params_ = InitParameters(config_, kParamSeed);
    const std::vector<int32_t> tokens =
        SyntheticTokens(int64_t(config_.batch) * (config_.seq + 1), config_.vocab, kTokenSeed);
    SplitBatch(tokens, config_.batch, config_.seq, &inputs_, &targets_);
    auto made = CudaModel::Create(config_, params_, 0);
    if (absl::IsUnavailable(made.status())) GTEST_SKIP() << made.status().message();
    ASSERT_TRUE(made.ok()) << made.status().message();
    gpu_ = *std::move(made);
    ASSERT_TRUE(gpu_->SetBatch(inputs_.data(), targets_.data(), config_.batch, config_.seq).ok());
    host_ = std::make_unique<HostModel>(config_, params_);
  }

  float HostLoss() { return host_->Forward(inputs_.data(), targets_.data(), config_.batch, config_.seq); }
  float GpuLoss() {
    const absl::StatusOr<float> loss = gpu_->Forward();
    EXPECT_TRUE(loss.ok()) << loss.status().message();
    return loss.value_or(0.0f);
  }

  Config config_;
  std::vector<float> params_;
  std::vector<int32_t> inputs_, targets_;
  std::unique_ptr<CudaModel> gpu_;
  std::unique_ptr<HostModel> host_;
};

TEST_P(CudaModelVsHost, LossMatchesTheHostWithinBf16Tolerance) {
  const float host = HostLoss();
  const float gpu = GpuLoss();
  // A random model's loss is about ln(vocab): a sanity bound on both.
  EXPECT_NEAR(host, std::log(float(config_.vocab)), 0.5f);
  EXPECT_NEAR(gpu, host, kLossRelTol * std::fabs(host));
}

TEST_P(CudaModelVsHost, GradientsMatchTheHostPerTensor) {
  HostLoss();
  host_->Backward();
  GpuLoss();
  ASSERT_TRUE(gpu_->Backward().ok());
  const absl::StatusOr<std::vector<float>> downloaded = gpu_->DownloadGrads();
  ASSERT_TRUE(downloaded.ok());
  const std::vector<float>& grads = *downloaded;
  ASSERT_EQ(grads.size(), host_->grads().size());
  for (const auto& [name, t] : Tensors(host_->layout())) {
    const Comparison c = Compare(grads.data() + t.offset, host_->grads().data() + t.offset, t.size());
    EXPECT_LT(c.rel_l2, kGradRelL2) << name;
    EXPECT_GT(c.cosine, kGradCosine) << name;
  }
}

TEST_P(CudaModelVsHost, OneAdamWStepMatchesTheHost) {
  const AdamW hp;
  HostLoss();
  host_->Backward();
  host_->Step(hp);
  GpuLoss();
  ASSERT_TRUE(gpu_->Backward().ok());
  ASSERT_TRUE(gpu_->Step(hp).ok());
  const absl::StatusOr<std::vector<float>> downloaded = gpu_->DownloadParams();
  ASSERT_TRUE(downloaded.ok());
  const std::vector<float>& after = *downloaded;
  const std::vector<float>& want = host_->params();
  // AdamW's first step moves each weight by lr·(g/(|g| + eps) + wd·p): about
  // ±lr whatever the gradient's size. Where a tiny gradient's sign differs
  // between fp32 and bf16 the two updates differ by 2·lr, never more.
  const double bound = 2.0 * hp.lr * (1.0 + 1e-3) + 1e-6;
  size_t over = 0;
  std::vector<float> gpu_update(after.size()), host_update(after.size());
  for (size_t i = 0; i < after.size(); ++i) {
    if (std::fabs(double(after[i]) - want[i]) > bound) ++over;
    gpu_update[i] = after[i] - params_[i];
    host_update[i] = want[i] - params_[i];
  }
  EXPECT_EQ(over, 0u);
  // The updates themselves point the same way: sign flips are confined to
  // gradients near zero, a few percent of the weights at most.
  EXPECT_GT(Compare(gpu_update.data(), host_update.data(), after.size()).cosine, 0.95);
}

TEST_P(CudaModelVsHost, FiveStepsReduceTheLossOnBothBackendsAlike) {
  const AdamW hp;
  std::vector<float> host_losses, gpu_losses;
  for (int i = 0; i < 5; ++i) {
    host_losses.push_back(HostLoss());
    host_->Backward();
    host_->Step(hp);
    gpu_losses.push_back(GpuLoss());
    ASSERT_TRUE(gpu_->Backward().ok());
    ASSERT_TRUE(gpu_->Step(hp).ok());
  }
  host_losses.push_back(HostLoss());
  gpu_losses.push_back(GpuLoss());
  EXPECT_LT(host_losses.back(), host_losses.front());
  EXPECT_LT(gpu_losses.back(), gpu_losses.front());
  // The same batch five times: the drop is large against bf16 noise; the
  // trajectories may drift apart a little more than one step's loss, so 3%.
  EXPECT_NEAR(gpu_losses.back(), host_losses.back(), 3e-2 * std::fabs(host_losses.back()));
}

TEST_P(CudaModelVsHost, TimedTrainStepMeasuresAndTrains) {
  const AdamW hp;
  const float before = GpuLoss();
  for (int i = 0; i < 3; ++i) {
    const absl::StatusOr<double> seconds = gpu_->TimedTrainStep(hp, nullptr);
    ASSERT_TRUE(seconds.ok()) << seconds.status().message();
    EXPECT_GT(*seconds, 0.0);
  }
  EXPECT_LT(GpuLoss(), before);
}

// Sums over two "ranks" that hold the same gradients: copies the range to
// the host (waiting for the communication stream), doubles it and copies it
// back, all on the stream it is given. Records the ranges in call order.
class DoublingReducer : public AllReducer {
 public:
  int ranks() const override { return 2; }
  absl::Status AllReduceSum(float* device_data, size_t count, void* stream) override {
    ranges.emplace_back(device_data, count);
    auto s = static_cast<cudaStream_t>(stream);
    std::vector<float> host(count);
    if (cudaMemcpyAsync(host.data(), device_data, count * sizeof(float), cudaMemcpyDeviceToHost, s) !=
            cudaSuccess ||
        cudaStreamSynchronize(s) != cudaSuccess) {
      return absl::InternalError("copy to host failed");
    }
    for (float& x : host) x *= 2.0f;
    if (cudaMemcpyAsync(device_data, host.data(), count * sizeof(float), cudaMemcpyHostToDevice, s) !=
            cudaSuccess ||
        cudaStreamSynchronize(s) != cudaSuccess) {
      return absl::InternalError("copy to device failed");
    }
    return absl::OkStatus();
  }
  std::vector<std::pair<float*, size_t>> ranges;
};

TEST_P(CudaModelVsHost, AllReduceOverTwoEqualRanksLeavesTheGradients) {
  GpuLoss();
  ASSERT_TRUE(gpu_->Backward().ok());
  const absl::StatusOr<std::vector<float>> alone = gpu_->DownloadGrads();
  ASSERT_TRUE(alone.ok());
  GpuLoss();
  DoublingReducer reducer;
  const absl::Status e = gpu_->Backward(&reducer);
  ASSERT_TRUE(e.ok()) << e.message();
  const absl::StatusOr<std::vector<float>> reduced = gpu_->DownloadGrads();
  ASSERT_TRUE(reduced.ok());
  // (g + g) / 2 = g exactly; only the order of the embedding's atomic adds
  // may differ between the two backward passes.
  EXPECT_LT(Compare(reduced->data(), alone->data(), alone->size()).rel_l2, 1e-5);
  // Blocks last to first, then the embedding range, covering everything once.
  const Layout layout = MakeLayout(config_);
  ASSERT_EQ(reducer.ranges.size(), layout.blocks.size() + 1);
  const float* base = reducer.ranges.back().first;
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    const BlockLayout& b = layout.blocks[layout.blocks.size() - 1 - i];
    EXPECT_EQ(reducer.ranges[i].first - base, ptrdiff_t(b.begin));
    EXPECT_EQ(reducer.ranges[i].second, b.end - b.begin);
  }
  EXPECT_EQ(reducer.ranges.back().second, layout.blocks[0].begin);
}

TEST_P(CudaModelVsHost, PrefillLogitsMatchTheHost) {
  const int prompt_len = std::min(config_.seq, 16);
  std::vector<int32_t> prompt(size_t(config_.batch) * prompt_len);
  for (int b = 0; b < config_.batch; ++b) {
    std::copy_n(inputs_.begin() + size_t(b) * config_.seq, prompt_len, prompt.begin() + size_t(b) * prompt_len);
  }
  const std::vector<float> want = host_->Prefill(prompt.data(), config_.batch, prompt_len);
  std::vector<float> got;
  const absl::Status e = gpu_->Prefill(prompt.data(), config_.batch, prompt_len, &got);
  ASSERT_TRUE(e.ok()) << e.message();
  ASSERT_EQ(got.size(), want.size());
  // Logits are a product through every layer: the gradient tolerance again.
  const Comparison c = Compare(got.data(), want.data(), want.size());
  EXPECT_LT(c.rel_l2, kGradRelL2);
  EXPECT_GT(c.cosine, kGradCosine);
  const absl::StatusOr<double> seconds = gpu_->TimedPrefill();
  ASSERT_TRUE(seconds.ok());
  EXPECT_GT(*seconds, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Presets, CudaModelVsHost, ::testing::Values("tiny", "small"));

// Greedy decoding on the tiny model at batch `batch`.
class CudaGreedy : public ::testing::TestWithParam<int> {
 protected:
  static constexpr int kPromptLen = 8;
  static constexpr int kSteps = 4;

  void SetUp() override {
    PERFGATE_SKIP_WITHOUT_DEVICE();
    config_ = *Preset("tiny");
    config_.batch = GetParam();
    params_ = InitParameters(config_, kParamSeed);
    prompt_ = SyntheticTokens(int64_t(config_.batch) * kPromptLen, config_.vocab, kTokenSeed);
    auto made = CudaModel::Create(config_, params_, 0);
    if (absl::IsUnavailable(made.status())) GTEST_SKIP() << made.status().message();
    ASSERT_TRUE(made.ok()) << made.status().message();
    gpu_ = *std::move(made);
    ASSERT_TRUE(gpu_->Prefill(prompt_.data(), config_.batch, kPromptLen, nullptr).ok());
  }

  Config config_;
  std::vector<float> params_;
  std::vector<int32_t> prompt_;
  std::unique_ptr<CudaModel> gpu_;
};

TEST_P(CudaGreedy, FirstTokensEqualTheHostsUnlessTheHostHadANearTie) {
  const int batch = config_.batch, vocab = config_.vocab;
  HostModel host(config_, params_);
  const std::vector<int32_t> host_greedy = host.Greedy(prompt_.data(), batch, kPromptLen, kSteps);
  // The host's logits at every step, to judge a disagreement.
  std::vector<std::vector<float>> logits;
  std::vector<int32_t> next(batch);
  logits.push_back(host.Prefill(prompt_.data(), batch, kPromptLen));
  for (int s = 1; s < kSteps; ++s) {
    for (int b = 0; b < batch; ++b) next[b] = Argmax(logits.back().data() + size_t(b) * vocab, vocab);
    logits.push_back(host.Decode(next.data()));
  }
  const absl::StatusOr<std::vector<int32_t>> greedy = gpu_->Greedy(kSteps, true);
  ASSERT_TRUE(greedy.ok()) << greedy.status().message();
  const std::vector<int32_t>& tokens = *greedy;
  ASSERT_EQ(tokens.size(), size_t(batch) * kSteps);
  for (int b = 0; b < batch; ++b) {
    for (int s = 0; s < kSteps; ++s) {
      const size_t i = size_t(b) * kSteps + s;
      if (tokens[i] == host_greedy[i]) continue;
      // A different pick is only acceptable where the host's two candidates
      // were within bf16's error of each other (logits here are about 0.2 in
      // size; bf16 weights move them by a few 1e-3). The sequences differ
      // from there on, so the rest of this one is not compared.
      const float* l = logits[s].data() + size_t(b) * vocab;
      ASSERT_GE(tokens[i], 0);
      ASSERT_LT(tokens[i], vocab);
      EXPECT_LT(std::fabs(l[host_greedy[i]] - l[tokens[i]]), 1e-2f)
          << "sequence " << b << " step " << s << ": device picked " << tokens[i] << ", host "
          << host_greedy[i];
      break;
    }
  }
}

TEST_P(CudaGreedy, GraphAndEagerDecodeGiveTheSameTokens) {
  constexpr int kLong = 16;
  const absl::StatusOr<std::vector<int32_t>> graph = gpu_->Greedy(kLong, true);
  ASSERT_TRUE(graph.ok());
  const absl::StatusOr<std::vector<int32_t>> eager = gpu_->Greedy(kLong, false);
  ASSERT_TRUE(eager.ok());
  const absl::StatusOr<std::vector<int32_t>> again = gpu_->Greedy(kLong, true);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*graph, *eager);
  EXPECT_EQ(*graph, *again);
}

TEST_P(CudaGreedy, TimedDecodeRunsFromThePromptAndRefusesToRunPastTheCache) {
  ASSERT_TRUE(gpu_->RewindToPrompt().ok());
  const absl::StatusOr<double> seconds = gpu_->TimedDecode(config_.seq - kPromptLen);
  ASSERT_TRUE(seconds.ok()) << seconds.status().message();
  EXPECT_GT(*seconds, 0.0);
  EXPECT_FALSE(gpu_->TimedDecode(1).ok());
  ASSERT_TRUE(gpu_->RewindToPrompt().ok());
  EXPECT_TRUE(gpu_->TimedDecode(1).ok());
}

TEST_P(CudaGreedy, AModelCreatedForInferenceDecodesTheSameTokensAndCannotTrain) {
  auto serving = CudaModel::CreateForInference(config_, params_, 0);
  ASSERT_TRUE(serving.ok()) << serving.status().message();
  ASSERT_TRUE((*serving)->Prefill(prompt_.data(), config_.batch, kPromptLen, nullptr).ok());
  const absl::StatusOr<std::vector<int32_t>> want = gpu_->Greedy(kSteps, true);
  ASSERT_TRUE(want.ok());
  const absl::StatusOr<std::vector<int32_t>> got = (*serving)->Greedy(kSteps, true);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, *want);  // the same kernels on the same inputs: bit-identical
  EXPECT_FALSE((*serving)->Forward().ok());
  EXPECT_FALSE((*serving)->Step(AdamW{}).ok());
}

INSTANTIATE_TEST_SUITE_P(Batches, CudaGreedy, ::testing::Values(1, 8));

TEST(CudaModel, CreateRefusesAModelLargerThanTheDevice) {
  PERFGATE_SKIP_WITHOUT_DEVICE();
  // The tiny model's 0.1 M parameters with activations for 128 M tokens
  // (hundreds of GB): no card holds it.
  Config huge = *Preset("tiny");
  huge.batch = 4'000'000;
  const absl::StatusOr<std::unique_ptr<CudaModel>> model =
      CudaModel::Create(huge, InitParameters(huge, kParamSeed), 0);
  EXPECT_TRUE(absl::IsUnavailable(model.status())) << model.status().message();
  EXPECT_NE(model.status().message().find("GiB free"), std::string::npos) << model.status().message();
}

}  // namespace
}  // namespace perfgate::suites::transformer::cuda
