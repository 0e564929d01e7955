#include "suites/training/training.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "common/status_macros.h"
#include "gloo/allreduce.h"
#include "gloo/context.h"
#include "gloo/math.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "suites/collectives/lockstep.h"
#include "suites/kernels/kernels.h"

#include "suites/transformer/model_case.h"
#include "suites/seed.h"

#if PERFGATE_HAVE_CUDA
#include "suites/collectives/nccl_adapter.h"
#include "suites/collectives/nccl_backend.h"
#include "suites/cuda/visible_devices.h"
#include "suites/transformer/cuda_model.h"
#endif

namespace perfgate::suites::training {
namespace {

using transformer::Config;

constexpr const char* kBuiltWithoutCuda = "built without CUDA";

// The bf16 tolerances of the CUDA backend's check against the host backend
// on the tiny preset before anything is timed (the gpu tests state why).
constexpr double kLossTolerance = 2e-2;      // relative
constexpr double kGradientTolerance = 5e-2;  // relative L2 over all parameters

const std::vector<MetricKind>& StepMetrics() {
  static const std::vector<MetricKind> m = {MetricKind::kTime, MetricKind::kTokensPerSecond,
                                            MetricKind::kMfu};
  return m;
}

const std::vector<MetricKind>& DataParallelMetrics() {
  static const std::vector<MetricKind> m = {MetricKind::kTime, MetricKind::kTokensPerSecond,
                                            MetricKind::kMfu, MetricKind::kScalingEfficiency};
  return m;
}

// What every case reads from its parameters.
struct CaseParams {
  std::string backend;
  Config config;
  int threads = 1;  // host only
  uint64_t weight_seed = 0;
};

std::optional<CaseParams> ReadParams(State& state) {
  CaseParams p;
  transformer::Backend backend;
  const int64_t batch = state.IntParam("batch"), seq = state.IntParam("seq");
  if (state.failed() || !transformer::ReadBackend(state, &backend)) return std::nullopt;
  p.backend = backend.cuda ? "cuda" : "host";
  p.threads = backend.threads;
  auto config = transformer::CaseConfig(state.Param("preset"), batch, seq);
  if (!config.ok()) {
    state.Fail(std::string(config.status().message()));
    return std::nullopt;
  }
  p.config = *config;
  // The weights depend on the model alone, never on the rank: data-parallel
  // ranks must start equal.
  p.weight_seed = CaseSeed(absl::StrCat(state.Param("preset"), "/", seq));
  return p;
}

// This rank's batch: the same on every run, different on every rank.
void RankBatch(const Config& c, uint64_t seed, int rank, std::vector<int32_t>* inputs,
               std::vector<int32_t>* targets) {
  const auto tokens = transformer::SyntheticTokens(int64_t{c.batch} * (c.seq + 1), c.vocab,
                                             seed + 1 + static_cast<uint64_t>(rank));
  transformer::SplitBatch(tokens, c.batch, c.seq, inputs, targets);
}

// A step that trains: the loss of the fixed batch is finite and went down
// over the measured steps.
void CheckTrained(State& state, float before, float after) {
  if (!std::isfinite(after)) {
    return state.Fail(absl::StrFormat("the loss became %g after the measured steps (it was %g)", after, before));
  }
  if (!(after < before)) {
    return state.Fail(absl::StrFormat(
        "the loss of the fixed batch did not go down over the measured steps: %g -> %g", before, after));
  }
}

void SetStepQuantities(State& state, const Config& c, int ranks, double peak) {
  state.SetFlopsPerIteration(transformer::TrainingStepFlops(c));
  state.SetTokensPerIteration(double(c.tokens()) * ranks);
  state.SetPeakFlops(peak);
}

bool CheckRanks(State& state, const collectives::World& world) {
  const int64_t ranks = state.IntParam("ranks");
  if (state.failed()) return false;
  if (ranks != world.size()) {
    state.Fail(absl::StrCat("ranks=", ranks, " but this world has ", world.size(),
                            " (--world-size); the agent sets ranks from --world-size"));
    return false;
  }
  return true;
}

// Every rank ends with the same weights, bit for bit: the all-reduced
// gradient is the same everywhere and AdamW is deterministic. A checksum's
// maximum and minimum over the ranks must agree.
absl::Status CheckRanksAgree(collectives::World& world, const std::vector<float>& params) {
  double sum = 0, weighted = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    sum += params[i];
    weighted += params[i] * double(i % 977 + 1);
  }
  std::vector<double> v{sum, weighted, -sum, -weighted};
  PERFGATE_RETURN_IF_ERROR(world.AllReduceMax(v));
  if (v[0] != -v[2] || v[1] != -v[3]) {
    return absl::InternalError(absl::StrFormat(
        "the ranks' weights differ after data-parallel steps (checksums from %.9g to %.9g)", -v[2], v[0]));
  }
  return absl::OkStatus();
}

// Runs the data-parallel sampling: each sample is one step, timed on every
// rank and agreed over the world (lockstep.h).
absl::Status RecordLockstep(State& state, collectives::World& world,
                            const std::function<absl::Status()>& warmup,
                            const std::function<absl::StatusOr<double>()>& sample) {
  auto m = collectives::MeasureInLockstep(world, state.options(), state.throttle_source(),
                                          state.inject_fraction(), warmup, sample);
  PERFGATE_RETURN_IF_ERROR(m);
  state.Record(*m);
  return absl::OkStatus();
}

// The median of a measurement's unthrottled samples (all when every one was throttled).
double MedianSeconds(const Measurement& m) {
  std::vector<double> v;
  for (size_t i = 0; i < m.sample_s.size(); ++i) {
    if (!m.throttled[i]) v.push_back(m.sample_s[i]);
  }
  if (v.empty()) v = m.sample_s;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double Seconds(const std::function<void()>& work) {
  Clock& clock = SteadyClock();
  const double t0 = clock.Now();
  work();
  return clock.Now() - t0;
}

// ---- host backend ----

void HostStep(State& state, const CaseParams& p) {
  openblas_set_num_threads(p.threads);
  const std::optional<double> peak = kernels::HostGemmPeak(state, p.threads);
  if (!peak) return;
  transformer::HostModel m(p.config, transformer::InitParameters(p.config, p.weight_seed));
  std::vector<int32_t> inputs, targets;
  RankBatch(p.config, p.weight_seed, 0, &inputs, &targets);
  SetStepQuantities(state, p.config, 1, *peak);
  const transformer::AdamW hp = StepHyperParameters();
  const int batch = p.config.batch, seq = p.config.seq;
  const float before = m.Forward(inputs.data(), targets.data(), batch, seq);
  state.MeasureHost([&] {
    m.Forward(inputs.data(), targets.data(), batch, seq);
    m.Backward();
    m.Step(hp);
  });
  CheckTrained(state, before, m.Forward(inputs.data(), targets.data(), batch, seq));
}

absl::Status HostDataParallel(State& state, const CaseParams& p, collectives::World& world) {
  openblas_set_num_threads(p.threads);
  std::optional<double> peak = kernels::HostGemmPeak(state, p.threads);
  if (!peak) return absl::OkStatus();
  // Every rank divides by the same peak: the best of theirs.
  std::vector<double> agreed_peak{*peak};
  PERFGATE_RETURN_IF_ERROR(world.AllReduceMax(agreed_peak));
  const std::vector<float> initial = transformer::InitParameters(p.config, p.weight_seed);
  std::vector<int32_t> inputs, targets;
  RankBatch(p.config, p.weight_seed, world.rank(), &inputs, &targets);
  const int batch = p.config.batch, seq = p.config.seq;
  const transformer::AdamW hp = StepHyperParameters();

  // One device: the same step with no gradient exchange, every rank at once
  // (so the reference sees the same machine load), on a model of its own.
  {
    transformer::HostModel local(p.config, initial);
    auto single = collectives::MeasureInLockstep(
        world, state.options(), nullptr, 0,
        [&] { return HostTrainStep(local, inputs.data(), targets.data(), batch, seq, hp, nullptr).status(); },
        [&]() -> absl::StatusOr<double> {
          absl::Status status;
          const double t = Seconds([&] {
            status = HostTrainStep(local, inputs.data(), targets.data(), batch, seq, hp, nullptr).status();
          });
          PERFGATE_RETURN_IF_ERROR(status);
          return t;
        });
    PERFGATE_RETURN_IF_ERROR(single);
    state.SetReferenceTime(MedianSeconds(*single));
  }

  transformer::HostModel m(p.config, initial);
  HostGradientReducer reducer(world, m.grads().data());
  SetStepQuantities(state, p.config, world.size(), agreed_peak[0]);
  const float before = m.Forward(inputs.data(), targets.data(), batch, seq);
  auto step = [&]() -> absl::StatusOr<double> {
    absl::Status status;
    const double t = Seconds([&] {
      status = HostTrainStep(m, inputs.data(), targets.data(), batch, seq, hp, &reducer).status();
    });
    PERFGATE_RETURN_IF_ERROR(status);
    return t;
  };
  PERFGATE_RETURN_IF_ERROR(RecordLockstep(state, world, [&] { return step().status(); }, step));
  PERFGATE_RETURN_IF_ERROR(CheckRanksAgree(world, m.params()));
  CheckTrained(state, before, m.Forward(inputs.data(), targets.data(), batch, seq));
  return absl::OkStatus();
}

// ---- CUDA backend ----

#if PERFGATE_HAVE_CUDA

double RelativeL2(const std::vector<float>& got, const std::vector<float>& want) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    diff += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
    norm += double(want[i]) * want[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-30));
}

// The CUDA backend's loss and gradient of one batch against the host's.
absl::Status CompareWithHost(const Config& c, const std::vector<float>& params, const std::vector<int32_t>& inputs,
                             const std::vector<int32_t>& targets, int device, float host_loss,
                             const std::vector<float>& host_grads) {
  auto gpu = transformer::cuda::CudaModel::Create(c, params, device);
  PERFGATE_RETURN_IF_ERROR(gpu);
  PERFGATE_RETURN_IF_ERROR((*gpu)->SetBatch(inputs.data(), targets.data(), c.batch, c.seq));
  absl::StatusOr<float> gpu_loss = (*gpu)->Forward();
  PERFGATE_RETURN_IF_ERROR(gpu_loss);
  PERFGATE_RETURN_IF_ERROR((*gpu)->Backward(nullptr));
  absl::StatusOr<std::vector<float>> grads = (*gpu)->DownloadGrads();
  PERFGATE_RETURN_IF_ERROR(grads);
  const double loss_error = std::fabs(*gpu_loss - host_loss) / std::fabs(host_loss);
  const double grad_error = RelativeL2(*grads, host_grads);
  if (!(loss_error <= kLossTolerance) || !(grad_error <= kGradientTolerance)) {
    return absl::InternalError(absl::StrFormat(
        "the CUDA backend disagrees with the host backend on the tiny preset: loss %g vs %g "
        "(relative %.3g, tolerance %g), gradient relative L2 error %.3g (tolerance %g)",
        *gpu_loss, host_loss, loss_error, kLossTolerance, grad_error, kGradientTolerance));
  }
  return absl::OkStatus();
}

// Before anything is timed: the CUDA backend's loss and gradient on the tiny
// preset match the host backend's within bf16 tolerances. Once per process
// and device.
absl::Status VerifyAgainstHost(int device) {
  static std::mutex mu;
  static std::map<int, absl::Status> verified;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = verified.find(device); it != verified.end()) return it->second;
  const Config c = *transformer::Preset("tiny");
  const std::vector<float> params = transformer::InitParameters(c, 7);
  std::vector<int32_t> inputs, targets;
  RankBatch(c, 7, 0, &inputs, &targets);
  transformer::HostModel host(c, params);
  const float host_loss = host.Forward(inputs.data(), targets.data(), c.batch, c.seq);
  host.Backward();
  absl::Status result = CompareWithHost(c, params, inputs, targets, device, host_loss, host.grads());
  verified[device] = result;
  return result;
}

// Sums gradient buckets over the world's NCCL communicator (one device per rank).
class NcclReducer final : public transformer::cuda::AllReducer {
 public:
  NcclReducer(std::shared_ptr<collectives::nccl::Communicators> comms, int ranks)
      : comms_(std::move(comms)), ranks_(ranks) {}
  int ranks() const override { return ranks_; }
  absl::Status AllReduceSum(float* data, size_t count, void* stream) override {
    return comms_->AllReduceFloatSum(data, count, stream);
  }

 private:
  std::shared_ptr<collectives::nccl::Communicators> comms_;
  int ranks_;
};

// Sets this rank's batch; returns its loss before any step.
absl::StatusOr<float> SetBatch(transformer::cuda::CudaModel& m, const Config& c, const std::vector<int32_t>& inputs,
                               const std::vector<int32_t>& targets) {
  PERFGATE_RETURN_IF_ERROR(m.SetBatch(inputs.data(), targets.data(), c.batch, c.seq));
  return m.Forward();
}

absl::Status CudaTrain(State& state, const CaseParams& p, collectives::World* world) {
  const absl::StatusOr<int> visible = cuda::VisibleDevices();
  PERFGATE_RETURN_IF_ERROR(visible);
  const int device = world != nullptr ? collectives::WorldDevice(*world, *visible) : 0;
  if (device >= *visible) {
    return absl::InvalidArgumentError(absl::StrCat("device ", device, " but only ", *visible, " are visible"));
  }
  PERFGATE_RETURN_IF_ERROR(VerifyAgainstHost(device));
  std::shared_ptr<collectives::nccl::Communicators> comms;
  if (world != nullptr && world->size() > 1) {
    auto made = collectives::WorldCommunicators(*world);
    PERFGATE_RETURN_IF_ERROR(made);
    comms = *made;
  }
  const std::vector<float> initial = transformer::InitParameters(p.config, p.weight_seed);
  auto m = transformer::cuda::CudaModel::Create(p.config, initial, device);
  PERFGATE_RETURN_IF_ERROR(m);
  // The GEMM peak of this device (Create made it current).
  std::optional<double> peak = kernels::DeviceGemmPeak(state, "bf16");
  if (!peak) return absl::OkStatus();
  const int rank = world != nullptr ? world->rank() : 0;
  std::vector<int32_t> inputs, targets;
  RankBatch(p.config, p.weight_seed, rank, &inputs, &targets);
  absl::StatusOr<float> before = SetBatch(**m, p.config, inputs, targets);
  PERFGATE_RETURN_IF_ERROR(before);
  const transformer::AdamW hp = StepHyperParameters();

  auto timed = [&](transformer::cuda::AllReducer* reducer) { return (*m)->TimedTrainStep(hp, reducer); };
  if (world == nullptr) {
    // One device: the engine's loop with nobody to agree with.
    collectives::World solo{collectives::WorldOptions{}};
    SetStepQuantities(state, p.config, 1, *peak);
    if (auto s = RecordLockstep(state, solo, [&] { return timed(nullptr).status(); },
                                [&] { return timed(nullptr); });
        !s.ok()) {
      return s;
    }
  } else {
    std::vector<double> agreed_peak{*peak};
    PERFGATE_RETURN_IF_ERROR(world->AllReduceMax(agreed_peak));
    // One device: the same step with no exchange, every rank at once; then
    // the weights go back to their start so the ranks begin equal.
    auto single = collectives::MeasureInLockstep(*world, state.options(), state.throttle_source(), 0,
                                                 [&] { return timed(nullptr).status(); },
                                                 [&] { return timed(nullptr); });
    PERFGATE_RETURN_IF_ERROR(single);
    state.SetReferenceTime(MedianSeconds(*single));
    m->reset();
    m = transformer::cuda::CudaModel::Create(p.config, initial, device);
    PERFGATE_RETURN_IF_ERROR(m);
    before = SetBatch(**m, p.config, inputs, targets);
    PERFGATE_RETURN_IF_ERROR(before);
    std::unique_ptr<NcclReducer> reducer;
    if (comms) reducer = std::make_unique<NcclReducer>(comms, world->size());
    SetStepQuantities(state, p.config, world->size(), agreed_peak[0]);
    if (auto s = RecordLockstep(state, *world, [&] { return timed(reducer.get()).status(); },
                                [&] { return timed(reducer.get()); });
        !s.ok()) {
      return s;
    }
    absl::StatusOr<std::vector<float>> params = (*m)->DownloadParams();
    PERFGATE_RETURN_IF_ERROR(params);
    PERFGATE_RETURN_IF_ERROR(CheckRanksAgree(*world, *params));
  }
  absl::StatusOr<float> after = (*m)->Forward();
  PERFGATE_RETURN_IF_ERROR(after);
  CheckTrained(state, *before, *after);
  return absl::OkStatus();
}

#endif

// ---- the cases ----

void Step(State& state) {
  auto p = ReadParams(state);
  if (!p) return;
  if (p->backend == "host") return HostStep(state, *p);
#if PERFGATE_HAVE_CUDA
  transformer::Conclude(state, CudaTrain(state, *p, nullptr));
#else
  state.Skip(kBuiltWithoutCuda);
#endif
}

void DataParallel(State& state) { RunDataParallel(state, collectives::ProcessWorld()); }

std::map<std::string, std::string> Point(const std::string& backend, const std::string& preset) {
  const Config c = *transformer::Preset(preset);
  std::map<std::string, std::string> p = transformer::ModelPoint(backend, preset);
  p["batch"] = std::to_string(c.batch);
  p["seq"] = std::to_string(c.seq);
  return p;
}

}  // namespace

void RunDataParallel(State& state, collectives::World& world) {
  auto p = ReadParams(state);
  if (!p) return;
  if (!CheckRanks(state, world)) return;
  if (p->backend == "host") {
    // A host case: the GPU's clocks and energy counter say nothing about it.
    state.set_throttle_source(nullptr);
    if (auto s = HostDataParallel(state, *p, world); !s.ok()) state.Fail(std::string(s.message()));
    return;
  }
#if PERFGATE_HAVE_CUDA
  transformer::Conclude(state, CudaTrain(state, *p, &world));
#else
  state.Skip(kBuiltWithoutCuda);
#endif
}

transformer::AdamW StepHyperParameters() {
  // A small learning rate: thousands of timed steps on one fixed batch must
  // not drive the weights to extremes (fp32 denormals slow a host step).
  transformer::AdamW hp;
  hp.lr = 1e-4f;
  return hp;
}

HostGradientReducer::HostGradientReducer(collectives::World& world, float* grads)
    : world_(world), grads_(grads), thread_([this] { Loop(); }) {}

HostGradientReducer::~HostGradientReducer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void HostGradientReducer::Enqueue(size_t begin, size_t end) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.emplace_back(begin, end);
    ++in_flight_;
  }
  cv_.notify_all();
}

void HostGradientReducer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    const auto [begin, end] = queue_.front();
    queue_.pop_front();
    const bool skip = !error_.ok();  // after a failure, drain without talking
    lock.unlock();
    absl::Status status;
    if (!skip && world_.size() > 1) {
      auto ctx = world_.Context();
      if (!ctx.ok()) {
        status = ctx.status();
      } else {
        try {
          gloo::AllreduceOptions o(*ctx);
          o.setOutput(grads_ + begin, end - begin);
          void (*fn)(void*, const void*, const void*, size_t) = &gloo::sum<float>;
          o.setReduceFunction(fn);
          gloo::allreduce(o);
        } catch (const std::exception& e) {
          status = absl::UnavailableError(absl::StrCat("all-reducing gradients [", begin, ", ", end,
                                                       "): ", e.what()));
        }
      }
    }
    lock.lock();
    if (!status.ok() && error_.ok()) error_ = status;
    --in_flight_;
    cv_.notify_all();
  }
}

absl::Status HostGradientReducer::Finish(size_t total) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return in_flight_ == 0; });
  absl::Status error = std::exchange(error_, absl::OkStatus());
  lock.unlock();
  PERFGATE_RETURN_IF_ERROR(error);
  const float scale = 1.0f / static_cast<float>(world_.size());
  for (size_t i = 0; i < total; ++i) grads_[i] *= scale;
  return absl::OkStatus();
}

absl::StatusOr<float> HostTrainStep(transformer::HostModel& model, const int32_t* inputs,
                                    const int32_t* targets, int batch, int seq,
                                    const transformer::AdamW& hp, HostGradientReducer* reducer) {
  const float loss = model.Forward(inputs, targets, batch, seq);
  if (reducer == nullptr) {
    model.Backward();
  } else {
    model.Backward([&](size_t begin, size_t end) { reducer->Enqueue(begin, end); });
    PERFGATE_RETURN_IF_ERROR(reducer->Finish(model.grads().size()));
  }
  model.Step(hp);
  return loss;
}

void Register(Registry& registry) {
  registry.Add({.suite = "training",
                .name = "step",
                .description = "one optimizer step (forward, backward, AdamW) of the GPT-style model on "
                               "a fixed synthetic batch; MFU = model FLOPs / step time / measured GEMM peak",
                .points = {Point("host", "tiny"), Point("cuda", "small"), Point("cuda", "large")},
                .metrics = StepMetrics(),
                .body = Step,
                .unavailable = transformer::ModelCaseUnavailable});
  registry.Add({.suite = "training",
                .name = "data_parallel",
                .description = "the step on every rank (one per device), gradients summed in buckets "
                               "during backward (Gloo on the host, NCCL on GPUs); tokens/s over all "
                               "ranks, MFU per device, scaling efficiency against one device",
                .axes = {{"ranks", {"1"}}},
                .points = {Point("host", "tiny"), Point("cuda", "small"), Point("cuda", "large")},
                .metrics = DataParallelMetrics(),
                .body = DataParallel,
                .only_when_named = true,
                .unavailable = transformer::ModelCaseUnavailable});
}

}  // namespace perfgate::suites::training
