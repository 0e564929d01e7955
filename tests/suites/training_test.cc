// The training and inference suites on the host backend: registration,
// parameters, the metrics each sample reports, and data-parallel training
// over Gloo with ranks as threads (the GPU path is in transformer_gpu_test).
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <thread>

#include <gtest/gtest.h>

#include "suites/builtin.h"
#include "suites/collectives/world.h"
#include "suites/kernels/ceilings.h"
#include "suites/transformer/transformer.h"
#include "suites/transformer/host_model.h"
#include "suites/transformer/model_case.h"
#include "suites/training/training.h"
#include "tests/support/processes.h"

namespace perfgate::suites::training {
namespace {

using collectives::World;
using perfgate::testing::TempDir;

EngineOptions Quick() {
  EngineOptions o;
  o.warmup_runs = 1;
  o.min_samples = 5;
  o.min_time_s = 0;
  o.max_noise = 10;  // stop as soon as the sample minimum is met
  o.timeout_s = 20;
  return o;
}

const CaseInstance* Find(const std::vector<CaseInstance>& cases, const std::string& key) {
  for (const CaseInstance& c : cases) {
    if (c.id.Key() == key) return &c;
  }
  return nullptr;
}

std::string JoinedKeys(const std::vector<CaseInstance>& cases) {
  std::string out;
  for (const CaseInstance& c : cases) out += c.id.Key() + "\n";
  return out;
}

CaseResult RunOne(const CaseInstance& c) {
  State state(c.id, c.metrics, Quick(), 0);
  c.spec->body(state);
  return state.TakeResult();
}

TEST(TrainingRegistry, StepRunsOnTheHostAndOnCudaPresetsAndDataParallelOnlyWhenNamed) {
  auto all = BuiltinRegistry().Select({}, {"training/*"}, {});
  ASSERT_TRUE(all.ok()) << all.status();
  const std::string keys = JoinedKeys(*all);
  EXPECT_NE(Find(*all, "training/step{backend=host,batch=4,dtype=fp32,preset=tiny,seq=32,threads=1}"),
            nullptr) << keys;
  EXPECT_NE(Find(*all, "training/step{backend=cuda,batch=8,dtype=bf16,preset=small,seq=512}"), nullptr)
      << keys;
  EXPECT_NE(Find(*all, "training/step{backend=cuda,batch=4,dtype=bf16,preset=large,seq=2048}"), nullptr)
      << keys;
  EXPECT_EQ(keys.find("data_parallel"), std::string::npos) << "multi-rank cases run only when named";

  auto named = BuiltinRegistry().Select({"training"}, {"data_parallel*"}, {}, {{"ranks", {"2"}}});
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_NE(Find(*named, "training/data_parallel{backend=host,batch=4,dtype=fp32,preset=tiny,ranks=2,"
                         "seq=32,threads=1}"),
            nullptr) << JoinedKeys(*named);
  // An explicit --set wins over the world's rank count.
  auto set = BuiltinRegistry().Select({"training"}, {"data_parallel*"}, {{"ranks", {"4"}}}, {{"ranks", {"2"}}});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_NE(JoinedKeys(*set).find("ranks=4"), std::string::npos) << JoinedKeys(*set);
  // The implicit value is not an error where no case uses it.
  EXPECT_TRUE(BuiltinRegistry().Select({"kernels"}, {}, {}, {{"ranks", {"2"}}}).ok());
}

TEST(TrainingRegistry, CudaCasesSayWhyTheyCannotRunHere) {
  auto all = BuiltinRegistry().Select({"training", "inference"}, {}, {});
  ASSERT_TRUE(all.ok()) << all.status();
  for (const CaseInstance& c : *all) {
    const bool cuda = c.id.params.at("backend") == "cuda";
    const std::string why = c.spec->unavailable ? c.spec->unavailable(c.id) : "";
    if (!cuda) {
      EXPECT_EQ(why, "") << c.id.Key();
    }
  }
}

TEST(TrainingCase, BadParametersFailNamingTheParameter) {
  EXPECT_NE(std::string(transformer::CaseConfig("huge", 4, 32).status().message()).find("tiny, small, medium, large"),
            std::string::npos);
  EXPECT_NE(std::string(transformer::CaseConfig("tiny", 0, 32).status().message()).find("batch"), std::string::npos);
  EXPECT_NE(std::string(transformer::CaseConfig("tiny", 4, -1).status().message()).find("seq"), std::string::npos);
  auto ok = transformer::CaseConfig("small", 2, 128);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->batch, 2);
  EXPECT_EQ(ok->seq, 128);
  EXPECT_EQ(ok->width, transformer::Preset("small")->width);

  auto cases = BuiltinRegistry().Select({"training"}, {"step{backend=host*"}, {{"dtype", {"bf16"}}});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 1u);
  const CaseResult r = RunOne(cases->front());
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("fp32"), std::string::npos) << r.reason;
}

TEST(TrainingCase, HostStepReportsTimeTokensPerSecondAndMfu) {
  kernels::Ceilings::Process().Clear();
  auto cases = BuiltinRegistry().Select({"training"}, {"step{backend=host*"}, {});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 1u);
  const CaseResult r = RunOne(cases->front());
  ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
  ASSERT_EQ(r.metrics.size(), 3u);
  EXPECT_EQ(r.metrics[1].name, "tokens_per_s");
  EXPECT_EQ(r.metrics[2].name, "mfu");
  // The peak MFU divides by is the host sgemm the case measured for itself.
  auto peak = kernels::Ceilings::Process().Best("host_sgemm_t1");
  ASSERT_TRUE(peak.has_value());
  const transformer::Config c = *transformer::Preset("tiny");
  ASSERT_GE(r.samples.size(), 5u);
  for (const Sample& s : r.samples) {
    const double seconds = s.values[0] / 1e3;
    EXPECT_NEAR(s.values[1], double(c.tokens()) / seconds, 1e-9 * s.values[1]);
    EXPECT_NEAR(s.values[2], transformer::TrainingStepFlops(c) / seconds / (peak->median * 1e9), 1e-9);
    // A tiny model's step is far from the GEMM peak, and never above it by much.
    EXPECT_GT(s.values[2], 0.0);
    EXPECT_LT(s.values[2], 1.5);
  }
}

TEST(InferenceCase, HostPrefillAndDecodeReportTokensPerSecond) {
  auto cases = BuiltinRegistry().Select({"inference"}, {"prefill{backend=host*", "decode{backend=host*"},
                                        {{"batch", {"1", "8"}}});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 4u) << JoinedKeys(*cases);  // prefill and decode at batch 1 and 8
  for (const CaseInstance& c : *cases) {
    SCOPED_TRACE(c.id.Key());
    const CaseResult r = RunOne(c);
    ASSERT_EQ(r.status, CaseStatus::kOk) << r.reason;
    ASSERT_EQ(r.metrics.size(), 2u);
    EXPECT_EQ(r.metrics[1].name, "tokens_per_s");
    const double batch = std::stod(c.id.params.at("batch"));
    const double prompt = std::stod(c.id.params.at("prompt"));
    // Prefill counts the prompt's tokens; decode one token per sequence per step.
    const double tokens = c.id.name == "prefill" ? batch * prompt : batch;
    ASSERT_GE(r.samples.size(), 5u);
    for (const Sample& s : r.samples) {
      EXPECT_NEAR(s.values[1], tokens / (s.values[0] / 1e3), 1e-9 * s.values[1]);
    }
  }
}

TEST(InferenceCase, DecodeNeedsPositionsForItsSteps) {
  auto cases = BuiltinRegistry().Select({"inference"}, {"decode{backend=host*"}, {{"tokens", {"0"}}});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_FALSE(cases->empty());
  const CaseResult r = RunOne(cases->front());
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("tokens"), std::string::npos) << r.reason;
}

// ---- data-parallel over Gloo, ranks as threads ----

// Runs `body(rank, world)` on `n` ranks in threads, one World each.
void OnRanks(int n, const std::function<void(int, World&)>& body) {
  auto dir = TempDir::Create("perfgate-dp-");
  ASSERT_TRUE(dir.ok());
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      World world({.rank = r, .size = n, .rendezvous = "file:" + dir->path(), .transport_host = "127.0.0.1"});
      body(r, world);
    });
  }
  for (std::thread& t : threads) t.join();
}

// The gradient of the mean loss over 2b sequences is the mean of the two
// halves' gradients: two ranks of b sequences each, gradients summed by the
// reducer while backward runs and divided by 2, must train exactly as one
// model on all 2b sequences (to fp32 rounding), and end equal to each other
// bit for bit.
TEST(DataParallel, TwoRanksTrainLikeOneModelOnTheirJoinedBatch) {
  transformer::Config c = *transformer::Preset("tiny");
  c.batch = 2;
  const std::vector<float> initial = transformer::InitParameters(c, 3);
  std::vector<std::vector<int32_t>> inputs(2), targets(2);
  for (int r = 0; r < 2; ++r) {
    transformer::SplitBatch(transformer::SyntheticTokens(int64_t{c.batch} * (c.seq + 1), c.vocab, 100 + r), c.batch,
                      c.seq, &inputs[r], &targets[r]);
  }
  const transformer::AdamW hp{.lr = 1e-3f};
  constexpr int kSteps = 3;
  std::vector<std::vector<float>> rank_params(2), first_grads(2);
  std::vector<absl::Status> errors(2);
  OnRanks(2, [&](int rank, World& world) {
    transformer::HostModel m(c, initial);
    HostGradientReducer reducer(world, m.grads().data());
    for (int i = 0; i < kSteps; ++i) {
      auto loss = HostTrainStep(m, inputs[rank].data(), targets[rank].data(), c.batch, c.seq, hp, &reducer);
      if (!loss.ok()) errors[rank] = loss.status();
      if (i == 0) first_grads[rank] = m.grads();
    }
    rank_params[rank] = m.params();
  });
  ASSERT_TRUE(errors[0].ok()) << errors[0];
  ASSERT_TRUE(errors[1].ok()) << errors[1];
  EXPECT_EQ(rank_params[0], rank_params[1]);

  transformer::Config joined = c;
  joined.batch = 2 * c.batch;
  std::vector<int32_t> all_inputs = inputs[0], all_targets = targets[0];
  all_inputs.insert(all_inputs.end(), inputs[1].begin(), inputs[1].end());
  all_targets.insert(all_targets.end(), targets[1].begin(), targets[1].end());
  transformer::HostModel one(joined, initial);
  // The first step's mean gradient (AdamW alone would hide a missing 1/n:
  // its update is nearly scale-free).
  one.Forward(all_inputs.data(), all_targets.data(), joined.batch, c.seq);
  one.Backward();
  double grad_diff = 0, grad_max = 0;
  for (size_t i = 0; i < initial.size(); ++i) {
    grad_diff = std::max(grad_diff, double(std::fabs(one.grads()[i] - first_grads[0][i])));
    grad_max = std::max(grad_max, double(std::fabs(one.grads()[i])));
  }
  EXPECT_LT(grad_diff, 1e-5 * grad_max) << "max |g_one - g_dp| " << grad_diff << " of " << grad_max;
  EXPECT_EQ(first_grads[0], first_grads[1]);
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_TRUE(HostTrainStep(one, all_inputs.data(), all_targets.data(), joined.batch, c.seq, hp, nullptr).ok());
  }
  double max_diff = 0, max_change = 0;
  for (size_t i = 0; i < initial.size(); ++i) {
    max_diff = std::max(max_diff, double(std::fabs(one.params()[i] - rank_params[0][i])));
    max_change = std::max(max_change, double(std::fabs(one.params()[i] - initial[i])));
  }
  // AdamW moves every weight by about lr per step; the two ways of summing
  // the gradient differ by rounding, far below that.
  EXPECT_GT(max_change, 0.5 * hp.lr);
  EXPECT_LT(max_diff, 1e-2 * max_change) << "max |one - dp| " << max_diff << ", max change " << max_change;
}

TEST(DataParallel, TheCaseReportsScalingEfficiencyAndTheRanksAgree) {
  auto cases = BuiltinRegistry().Select({"training"}, {"data_parallel{backend=host*"}, {}, {{"ranks", {"2"}}});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 1u);
  std::vector<CaseResult> results(2);
  OnRanks(2, [&](int rank, World& world) {
    const CaseInstance& c = cases->front();
    State state(c.id, c.metrics, Quick(), 0);
    RunDataParallel(state, world);
    results[rank] = state.TakeResult();
  });
  for (int r = 0; r < 2; ++r) {
    ASSERT_EQ(results[r].status, CaseStatus::kOk) << "rank " << r << ": " << results[r].reason;
    ASSERT_EQ(results[r].metrics.size(), 4u);
    EXPECT_EQ(results[r].metrics[3].name, "scaling_efficiency");
    // Every rank stops on rank 0's word and reports the agreed times.
    ASSERT_EQ(results[r].samples.size(), results[0].samples.size());
    for (size_t i = 0; i < results[r].samples.size(); ++i) {
      EXPECT_EQ(results[r].samples[i].values, results[0].samples[i].values);
    }
  }
  const transformer::Config c = *transformer::Preset("tiny");
  for (const Sample& s : results[0].samples) {
    const double seconds = s.values[0] / 1e3;
    EXPECT_NEAR(s.values[1], 2.0 * double(c.tokens()) / seconds, 1e-9 * s.values[1]);  // both ranks' tokens
    EXPECT_GT(s.values[3], 0.0);
  }
}

TEST(DataParallel, ARankCountOtherThanTheWorldsFails) {
  auto cases = BuiltinRegistry().Select({"training"}, {"data_parallel{backend=host*"}, {{"ranks", {"3"}}});
  ASSERT_TRUE(cases.ok()) << cases.status();
  ASSERT_EQ(cases->size(), 1u);
  const CaseResult r = RunOne(cases->front());  // the process's world: one rank
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("ranks=3"), std::string::npos) << r.reason;
}

}  // namespace
}  // namespace perfgate::suites::training

namespace perfgate::suites::training {
namespace {

// Two agent processes, one rank each, meet through a file rendezvous: the
// case key carries ranks=2 from --world-size, both ranks finish with the same
// agreed samples, and rank 0 writes the result file.
TEST(DataParallelAgent, TwoRankProcessesTrainAndAgree) {
  const char* bin = std::getenv("PERFGATE_BIN_DIR");
  ASSERT_NE(bin, nullptr) << "PERFGATE_BIN_DIR is set by CTest";
  const std::string agent = std::string(bin) + "/agent/perfgate-agent";
  auto dir = TempDir::Create("perfgate-dp-agent-");
  ASSERT_TRUE(dir.ok());
  std::vector<std::unique_ptr<perfgate::testing::ChildProcess>> ranks;
  for (int r = 0; r < 2; ++r) {
    std::vector<std::string> argv = {
        agent, "run", "--suite", "training", "--filter", "data_parallel{backend=host*",
        "--rank", std::to_string(r), "--world-size", "2", "--rendezvous", "file:" + dir->Join("rdzv"),
        "--transport-host", "127.0.0.1", "--offline", "--output", dir->Join("out" + std::to_string(r) + ".json"),
        "--min-samples", "5", "--min-time", "0", "--max-noise", "1000", "--timeout", "30"};
    auto child = perfgate::testing::ChildProcess::Start(argv, dir->Join("log" + std::to_string(r)));
    ASSERT_TRUE(child.ok()) << child.status();
    ranks.push_back(std::move(*child));
  }
  for (auto& c : ranks) {
    const std::optional<int> code = c->Wait(std::chrono::seconds(120));
    ASSERT_TRUE(code.has_value()) << c->OutputTail();
    EXPECT_EQ(*code, 0) << c->OutputTail();
  }
  const std::string key =
      "training/data_parallel{backend=host,batch=4,dtype=fp32,preset=tiny,ranks=2,seq=32,threads=1}";
  for (auto& c : ranks) {
    EXPECT_NE(c->Output().find(key), std::string::npos) << c->OutputTail();
    EXPECT_NE(c->Output().find("scaling_efficiency"), std::string::npos) << c->OutputTail();
  }
  std::ifstream file(dir->Join("out0.json"));
  ASSERT_TRUE(file.good());
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"ranks\": \"2\""), std::string::npos) << text.substr(0, 400);
  EXPECT_NE(text.find("\"status\": \"ok\""), std::string::npos) << text.substr(0, 400);
}

}  // namespace
}  // namespace perfgate::suites::training
