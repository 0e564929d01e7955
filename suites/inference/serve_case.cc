// inference/serve: the model under load (serving.h), one serving run per
// sample, and the knee of a rate sweep (docs/serving.md).
#include "suites/inference/serve_case.h"

#include <cblas.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/stats.h"
#include "common/status_macros.h"
#include "suites/inference/serving.h"
#include "suites/seed.h"
#include "suites/transformer/host_model.h"
#include "suites/transformer/model_case.h"

#if PERFGATE_HAVE_CUDA
#include "suites/cuda/visible_devices.h"
#include "suites/inference/serve_cuda.h"
#endif

namespace perfgate::suites::inference {
namespace {

// What every sample reports, before the percentiles its request count
// cannot bound are left out (ServeMetrics).
const std::vector<MetricKind> kServeMetrics = {
    MetricKind::kRequestsPerSecond, MetricKind::kOutputTokensPerSecond, MetricKind::kGoodput,
    MetricKind::kTtftP50, MetricKind::kTtftP90, MetricKind::kTtftP99,
    MetricKind::kTpotP50, MetricKind::kTpotP90, MetricKind::kTpotP99,
    MetricKind::kQueueP99, MetricKind::kE2eP99, MetricKind::kPreemptions, MetricKind::kKvOccupancy};

// The quantile a percentile kind reports; 0 for the other kinds.
double QuantileOf(MetricKind k) {
  switch (k) {
    case MetricKind::kTtftP50: case MetricKind::kTpotP50: return 0.5;
    case MetricKind::kTtftP90: case MetricKind::kTpotP90: return 0.9;
    case MetricKind::kTtftP99: case MetricKind::kTpotP99: case MetricKind::kQueueP99: case MetricKind::kE2eP99:
      return 0.99;
    default: return 0;
  }
}

int64_t ParamOr(const BenchmarkId& id, const std::string& name, int64_t fallback) {
  auto it = id.params.find(name);
  int64_t v = 0;
  return it != id.params.end() && absl::SimpleAtoi(it->second, &v) ? v : fallback;
}

double DoubleParam(State& state, const std::string& name) {
  double v = 0;
  if (!absl::SimpleAtod(state.Param(name), &v)) {
    state.Fail(absl::StrCat("parameter ", name, "='", state.Param(name), "' is not a number"));
  }
  return v;
}

// Parameter `name` as an int; Fail()s the case when it is beyond an int's
// range (Validate then bounds it, naming the bound).
int IntOf(State& state, const std::string& name) {
  const int64_t v = state.IntParam(name);
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    state.Fail(absl::StrCat("parameter ", name, "=", v, " is out of range (docs/serving.md gives the bounds)"));
    return 0;
  }
  return static_cast<int>(v);
}

// The options a point names; nullopt after failing the case.
std::optional<ServeOptions> ReadOptions(State& state) {
  ServeOptions o;
  o.rate = DoubleParam(state, "rate");
  o.users = IntOf(state, "users");
  const int64_t prompt = state.IntParam("prompt"), output = state.IntParam("output");
  o.prompt_min = static_cast<int>((prompt + 1) / 2);
  o.prompt_max = static_cast<int>(prompt * 3 / 2);
  o.output_min = static_cast<int>((output + 1) / 2);
  o.output_max = static_cast<int>(output * 3 / 2);
  o.kv_blocks = IntOf(state, "kv_blocks");
  o.block_tokens = IntOf(state, "block_tokens");
  o.max_running = IntOf(state, "max_running");
  o.warmup_requests = IntOf(state, "warmup");
  o.requests = IntOf(state, "requests");
  o.min_seconds = DoubleParam(state, "min_s");
  o.ttft_objective_ms = DoubleParam(state, "ttft_ms");
  o.tpot_objective_ms = DoubleParam(state, "tpot_ms");
  o.seed = static_cast<uint64_t>(state.IntParam("seed"));
  if (state.failed()) return std::nullopt;
  if (prompt > 4096 || output > 4096) {
    state.Fail("prompt and output must be at most 4096 tokens");
    return std::nullopt;
  }
  if (const std::string problem = Validate(o); !problem.empty()) {
    state.Fail(problem);
    return std::nullopt;
  }
  return o;
}

// The field of a summary each serving kind reports.
double ServeSummary::* FieldOf(MetricKind k) {
  static const std::map<MetricKind, double ServeSummary::*> kFields = {
      {MetricKind::kRequestsPerSecond, &ServeSummary::requests_per_s},
      {MetricKind::kOutputTokensPerSecond, &ServeSummary::output_tokens_per_s},
      {MetricKind::kGoodput, &ServeSummary::goodput},
      {MetricKind::kTtftP50, &ServeSummary::ttft_p50}, {MetricKind::kTtftP90, &ServeSummary::ttft_p90},
      {MetricKind::kTtftP99, &ServeSummary::ttft_p99}, {MetricKind::kTpotP50, &ServeSummary::tpot_p50},
      {MetricKind::kTpotP90, &ServeSummary::tpot_p90}, {MetricKind::kTpotP99, &ServeSummary::tpot_p99},
      {MetricKind::kQueueP99, &ServeSummary::queue_p99}, {MetricKind::kE2eP99, &ServeSummary::e2e_p99},
      {MetricKind::kPreemptions, &ServeSummary::preemptions}, {MetricKind::kKvOccupancy, &ServeSummary::kv_occupancy}};
  return kFields.at(k);
}

std::vector<double> Values(const ServeSummary& s, const std::vector<MetricKind>& kinds) {
  std::vector<double> out;
  for (MetricKind k : kinds) out.push_back(s.*FieldOf(k));
  return out;
}

// The host model with an injected slowdown: each step is followed by busy
// work in proportion to its time (--inject-slowdown), so latencies grow.
class SlowedModel : public ServeModel {
 public:
  SlowedModel(ServeModel& inner, double fraction, Clock& clock) : inner_(inner), fraction_(fraction), clock_(clock) {}
  std::vector<int32_t> Step(const std::vector<transformer::SlotRun>& runs) override {
    const double t0 = clock_.Now();
    std::vector<int32_t> next = inner_.Step(runs);
    if (fraction_ > 0) BusyWork((clock_.Now() - t0) * fraction_, clock_);
    return next;
  }

 private:
  ServeModel& inner_;
  double fraction_;
  Clock& clock_;
};

// Flags the case timed out after `done` of `runs` serving runs; `run`, when
// given, is the one the timeout cut short.
void TimedOut(State& state, unsigned done, unsigned runs, const ServeRun* run) {
  std::string what = absl::StrFormat("per-case timeout of %g s reached after %u of %u serving runs",
                                     state.options().timeout_s, done, runs);
  if (run != nullptr) {
    size_t finished = 0;
    for (const RequestTimes& t : run->measured) finished += t.finish >= 0 ? 1 : 0;
    absl::StrAppend(&what, absl::StrFormat("; the next was cut short with %zu of %zu measured requests finished "
                                           "and is not recorded",
                                           finished, run->measured.size()));
  }
  state.TimeOut(what);
}

// The serving runs of a point on `model`, one sample each, the device's
// clocks and energy counter read around each (MeasureOnce); `failed` is
// the model's first failed step (OK while every step ran). Latencies are
// timed on the wall clock, or with `cpu_clock` in the serving thread's CPU
// time (ThreadCpuClock), the injected slowdown too. The case's timeout
// runs from `start` (SteadyClock) on the wall clock: a run it cuts short is
// left out and the case flagged timed out.
absl::Status RunServing(State& state, const ServeOptions& o, int vocab, ServeModel& model,
                        const std::function<absl::Status()>& failed, double start, bool cpu_clock = false) {
  const unsigned runs = std::max(1u, state.options().sample_count);
  const std::vector<MetricKind> kinds = ServeMetrics(state.id());
  const double stop_at = start + state.options().timeout_s;
  for (unsigned r = 0; r < runs; ++r) {
    if (r > 0 && SteadyClock().Now() >= stop_at) {
      TimedOut(state, r, runs, nullptr);
      break;
    }
    ServeRun run;
    ThreadCpuClock cpu;
    Clock& clock = cpu_clock ? static_cast<Clock&>(cpu) : SteadyClock();
    SlowedModel served(model, state.inject_fraction(), clock);
    const Measurement around = MeasureOnce([&] { run = Serve(o, vocab, served, clock, SteadyClock(), stop_at); },
                                           SteadyClock(), state.throttle_source());
    PERFGATE_RETURN_IF_ERROR(failed());
    if (run.cut_short) {
      TimedOut(state, r, runs, &run);
      break;
    }
    state.RecordValues(Values(Summarize(run, o), kinds), around, static_cast<double>(run.output_tokens));
  }
  std::vector<std::string> refused;
  for (MetricKind k : kServeMetrics) {
    if (std::find(kinds.begin(), kinds.end(), k) == kinds.end()) refused.push_back(SpecOf(k).name);
  }
  if (!refused.empty()) {
    const double q = 0.99;
    state.AddNote(absl::StrFormat("not gating: %s from %d requests; a one-sided 95 %% order-statistic bound of "
                                  "p99 needs %zu (set requests)",
                                  absl::StrJoin(refused, ", "), o.requests, stats::MinCountForQuantileBound(q)));
  }
  state.AddNote(absl::StrCat("seed ", o.seed));
  return absl::OkStatus();
}

void HostServe(State& state, const ServeOptions& o, const transformer::Backend& backend,
               const transformer::Config& config, double start, bool cpu_clock) {
  state.set_throttle_source(nullptr);  // a host case: the GPU's clocks and energy say nothing about it
  openblas_set_num_threads(backend.threads);
  transformer::HostModel model(config, transformer::InitParameters(config, CaseSeed(state.Param("preset"))));
  HostServeModel host(model, o.max_running);
  transformer::Conclude(state,
                        RunServing(state, o, config.vocab, host, [] { return absl::OkStatus(); }, start, cpu_clock));
  state.AddNote("energy per output token unavailable: a host case reads no device energy counter");
}

#if PERFGATE_HAVE_CUDA
// The device model under load: checked against the host first, then each
// run's energy per output token where the device has a counter.
absl::Status CudaServe(State& state, const ServeOptions& o, const transformer::Config& config, double start) {
  PERFGATE_RETURN_IF_ERROR(cuda::VisibleDevices().status());
  PERFGATE_RETURN_IF_ERROR(VerifySlotsAgainstHost());
  PERFGATE_ASSIGN_OR_RETURN(
      std::unique_ptr<CudaServeModel> model,
      CudaServeModel::Create(config, transformer::InitParameters(config, CaseSeed(state.Param("preset"))),
                             o.max_running));
  return RunServing(state, o, config.vocab, *model, [&] { return model->status(); }, start);
}
#endif

void ServeBody(State& state) {
  const double start = SteadyClock().Now();  // the timeout counts the model's set-up too
  transformer::Backend backend;
  if (!transformer::ReadBackend(state, &backend)) return;
  std::optional<ServeOptions> o = ReadOptions(state);
  if (!o) return;
  const bool cpu_clock = state.CpuClock(backend.threads);
  if (state.failed()) return;
  if (cpu_clock && backend.cuda) {
    return state.Fail("clock=cpu times the serving thread alone and a device's work is not in it: use clock=wall");
  }
  auto config = transformer::CaseConfig(state.Param("preset"), o->max_running, o->prompt_max + o->output_max);
  if (!config.ok()) return state.Fail(std::string(config.status().message()));
  if (!backend.cuda) return HostServe(state, *o, backend, *config, start, cpu_clock);
#if PERFGATE_HAVE_CUDA
  transformer::Conclude(state, CudaServe(state, *o, *config, start));
#else
  state.Skip("built without CUDA");
#endif
}

// The median over a result's samples of metric `name`; nullopt without it.
std::optional<double> MedianOf(const CaseResult& r, const std::string& name) {
  for (size_t m = 0; m < r.metrics.size(); ++m) {
    if (r.metrics[m].name != name) continue;
    std::vector<double> v;
    for (const Sample& s : r.samples) v.push_back(s.values[m]);
    if (v.empty()) return std::nullopt;
    return stats::Median(v);
  }
  return std::nullopt;
}

// The knee as the case's one sample when the sweep bracketed it. Outside the
// range the sweep measured no knee, only a bound: no sample then (a bound
// gated as a value would pass a knee that fell further, or fail one that
// rose), the case skipped with the bound (which the gate judges as one) and
// the rates that would find it.
void SetKnee(const Knee& knee, const std::string& pct, CaseResult* k) {
  // Rates as --set takes them: whole numbers, fractions below one.
  auto rate = [](double r) { return r >= 1 ? absl::StrFormat("%.0f", r) : absl::StrFormat("%g", r); };
  const double r = knee.rate;
  switch (knee.bound) {
    case KneeBound::kInside:
      k->samples = {{0, {r}, false}};
      k->status = CaseStatus::kOk;
      k->reason = absl::StrCat("knee ", rate(r), " requests/s");
      return;
    case KneeBound::kBelowRange:
      k->status = CaseStatus::kSkipped;
      k->bound = ValueBound{k->metrics.front().name, ValueBound::Kind::kAtMost, r};
      k->reason = absl::StrCat("knee below the swept range: the objectives at ", pct,
                               " missed already at its lowest rate, ", rate(r),
                               " requests/s; sweep lower rates to find it (e.g. --set rate=", rate(r / 4), ",",
                               rate(r / 2), ",", rate(r), ")");
      return;
    case KneeBound::kAboveRange:
      k->status = CaseStatus::kSkipped;
      k->bound = ValueBound{k->metrics.front().name, ValueBound::Kind::kAtLeast, r};
      k->reason = absl::StrCat("knee above the swept range: at least its top rate, ", rate(r),
                               " requests/s, where the objectives at ", pct,
                               " still held; sweep higher rates to find it (e.g. --set rate=", rate(r), ",",
                               rate(2 * r), ",", rate(4 * r), ")");
      return;
  }
}

// One knee from the points of one sweep (equal but for the rate), judged at
// the highest percentile they all report.
CaseResult KneeOf(BenchmarkId id, const std::vector<const CaseResult*>& points) {
  std::string pct = "p50";
  for (const char* p : {"p90", "p99"}) {
    if (MedianOf(*points.front(), absl::StrCat("ttft_", p))) pct = p;
  }
  double ttft_ms = 0, tpot_ms = 0;
  (void)absl::SimpleAtod(id.params.at("ttft_ms"), &ttft_ms);
  (void)absl::SimpleAtod(id.params.at("tpot_ms"), &tpot_ms);
  std::vector<std::pair<double, bool>> met;
  std::vector<std::string> rates, seen;
  for (const CaseResult* r : points) {
    double rate = 0;
    (void)absl::SimpleAtod(r->benchmark.params.at("rate"), &rate);
    const auto ttft = MedianOf(*r, absl::StrCat("ttft_", pct)), tpot = MedianOf(*r, absl::StrCat("tpot_", pct));
    const bool ok = ttft && tpot && *ttft <= ttft_ms && *tpot <= tpot_ms;
    met.push_back({rate, ok});
    rates.push_back(r->benchmark.params.at("rate"));
    seen.push_back(absl::StrFormat("%s: TTFT %.3g ms, TPOT %.3g ms%s", rates.back(), ttft.value_or(0),
                                   tpot.value_or(0), ok ? "" : " (missed)"));
  }
  CaseResult k;
  id.name = "serve_knee";
  // '+' between the rates: a parameter's value never holds a comma, which
  // separates the key's parameters.
  id.params["rates"] = absl::StrJoin(rates, "+");
  id.params["objective"] = pct;
  k.benchmark = std::move(id);
  k.metrics = {SpecOf(MetricKind::kKneeRate)};
  SetKnee(FindKnee(met), pct, &k);
  absl::StrAppend(&k.reason, "; objectives at ", pct, " by rate: ", absl::StrJoin(seen, "; "));
  return k;
}

// The knee of every sweep in a run: points of inference/serve equal but for
// their rate, two or more of them measured.
std::vector<CaseResult> DeriveKnees(const std::vector<CaseResult>& results) {
  std::map<std::string, std::vector<const CaseResult*>> sweeps;
  std::map<std::string, BenchmarkId> ids;
  for (const CaseResult& r : results) {
    if (r.status != CaseStatus::kOk || r.samples.empty()) continue;
    BenchmarkId id = r.benchmark;
    id.params.erase("rate");
    sweeps[id.Key()].push_back(&r);
    ids.emplace(id.Key(), id);
  }
  std::vector<CaseResult> out;
  for (const auto& [key, points] : sweeps) {
    if (points.size() >= 2) out.push_back(KneeOf(ids.at(key), points));
  }
  return out;
}

// The registered points: the tiny model on one host core (its knobs sized
// so that the default rate is near its knee), and the small model on a GPU
// (longer prompts and outputs, 32 sequences, 64-token blocks).
std::map<std::string, std::string> ServePoint(const std::string& backend) {
  const bool host = backend == "host";
  std::map<std::string, std::string> p = transformer::ModelPoint(backend, host ? "tiny" : "small");
  const std::map<std::string, std::string> knobs = {
      {"prompt", host ? "16" : "128"}, {"output", host ? "16" : "64"}, {"block_tokens", host ? "8" : "64"},
      {"max_running", host ? "16" : "32"}, {"warmup", host ? "16" : "32"}, {"requests", "300"}, {"min_s", "0"},
      {"ttft_ms", host ? "20" : "50"}, {"tpot_ms", host ? "2" : "5"}, {"seed", "1"}, {"clock", kWallClock}};
  p.insert(knobs.begin(), knobs.end());
  return p;
}

}  // namespace

std::vector<MetricKind> ServeMetrics(const BenchmarkId& id) {
  const int64_t requests = ParamOr(id, "requests", 0);
  std::vector<MetricKind> out;
  for (MetricKind k : kServeMetrics) {
    const double q = QuantileOf(k);
    if (q == 0 || requests >= static_cast<int64_t>(stats::MinCountForQuantileBound(q))) out.push_back(k);
  }
  return out;
}

void RegisterServe(Registry& registry) {
  registry.Add({.suite = "inference",
                .name = "serve",
                .description = "requests arriving at `rate` per second (Poisson, seeded) served with continuous "
                               "batching over a KV cache of kv_blocks blocks (preemption by recompute): "
                               "throughput, TTFT and TPOT percentiles, goodput at ttft_ms/tpot_ms, preemptions",
                // Axes, so that a sweep may vary them together (--set rate=250..8K --set kv_blocks=32,64).
                .axes = {{"rate", {"500"}}, {"kv_blocks", {"64"}}, {"users", {"0"}}},
                .points = {ServePoint("host"), ServePoint("cuda")},
                .metrics = kServeMetrics,
                .body = ServeBody,
                .metrics_for = ServeMetrics,
                .unavailable = transformer::ModelCaseUnavailable,
                .derive = DeriveKnees});
}

}  // namespace perfgate::suites::inference
