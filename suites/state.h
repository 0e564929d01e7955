// What a case body receives: its parameters, the engine, and the place its
// samples and outcome go.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "measure/engine.h"
#include "common/run_types.h"
#include "suites/energy.h"

namespace perfgate::suites {

/// The default of a case's `clock` parameter (State::CpuClock): wall time.
inline constexpr const char* kWallClock = "wall";

/// The quantities a sample can report. Each kind up to kScalingEfficiency is
/// derived from the sample's time and what the body declared per iteration;
/// the serving kinds after it are values a serving run reports of itself
/// (State::RecordValues), one sample per run.
enum class MetricKind {
  kTime,        // "time" in ms, lower is better
  kBandwidth,   // "bandwidth" in GB/s (decimal), bytes read + written / time
  kThroughput,  // "throughput" in GFLOP/s, flops / time
  kTflops,      // "tflops" in TFLOP/s, flops / time (device GEMMs)
  kAlgBandwidth,  // "algbw" in GB/s, a collective's size S / time (nccl-tests)
  kBusBandwidth,  // "busbw" in GB/s, algbw x the operation's bus factor
  kRoofFraction,  // "roof_fraction", a ratio: bandwidth / the roof set with SetRoof
  kTokensPerSecond,  // "tokens_per_s", tokens per iteration (SetTokensPerIteration) / time
  kMfu,              // "mfu", a ratio: flops / time / the peak set with SetPeakFlops
  kScalingEfficiency,  // "scaling_efficiency", a ratio: SetReferenceTime's time / time
  kRequestsPerSecond,  // "requests_per_s": completed requests / the measured window
  kOutputTokensPerSecond,  // "output_tokens_per_s": generated tokens / the measured window
  kGoodput,            // "goodput" in requests/s: requests meeting both latency objectives
  kTtftP50, kTtftP90, kTtftP99,  // "ttft_pXX" in ms: time to first token, arrival to token
  kTpotP50, kTpotP90, kTpotP99,  // "tpot_pXX" in ms: time per output token after the first
  kQueueP99,           // "queue_p99" in ms: arrival to first scheduled
  kE2eP99,             // "e2e_p99" in ms: arrival to last token
  kPreemptions,        // "preemptions": sequences evicted from the KV cache and recomputed
  kKvOccupancy,        // "kv_occupancy": mean fraction of KV blocks held, over iterations
  kKneeRate,           // "knee_rate" in requests/s: highest swept rate meeting the objectives
};

/// Whether a kind is a value of its own (RecordValues), not derived from time.
bool IsValueKind(MetricKind kind);

/// The metric a kind reports.
MetricSpec SpecOf(MetricKind kind);

/// A case body's view of one run of one case.
class State {
 public:
  State(BenchmarkId id, std::vector<MetricKind> metrics, EngineOptions options,
        double inject_fraction);

  const BenchmarkId& id() const { return id_; }
  /// The value of parameter `name`; aborts if the case has no such axis.
  const std::string& Param(const std::string& name) const;
  /// The value of option `name` (CaseSpec::options), `fallback` (its
  /// default) where the key leaves it out.
  std::string ParamOr(const std::string& name, const std::string& fallback) const;
  /// Whether the case's `clock` parameter (wall, the default where an
  /// option leaves it out of the key, or cpu) asks for the calling thread's
  /// CPU time (ThreadCpuClock). Fail()s the case naming any other value, or
  /// cpu for work on more than one thread (`threads`), whose other threads'
  /// time it would leave out.
  bool CpuClock(int64_t threads);
  /// Param(name) as an integer; Fail()s the case and returns 0 if it is not one.
  int64_t IntParam(const std::string& name);

  /// Bytes read plus written by one iteration (for kBandwidth).
  void SetBytesPerIteration(double bytes) { bytes_ = bytes; }
  /// Floating-point operations of one iteration (for kThroughput).
  void SetFlopsPerIteration(double flops) { flops_ = flops; }
  /// A collective's size S in bytes as nccl-tests defines it (kAlgBandwidth).
  void SetAlgorithmBytes(double bytes) { alg_bytes_ = bytes; }
  /// busbw / algbw for the operation and rank count (kBusBandwidth).
  void SetBusFactor(double factor) { bus_factor_ = factor; }
  /// The measured ceiling (GB/s) kRoofFraction divides the bandwidth by.
  void SetRoof(double roof_gbs) { roof_ = roof_gbs; }
  /// Tokens one iteration processes (kTokensPerSecond).
  void SetTokensPerIteration(double tokens) { tokens_ = tokens; }
  /// The measured peak (FLOP/s) kMfu divides the achieved FLOP/s by.
  void SetPeakFlops(double flops_per_s) { peak_flops_ = flops_per_s; }
  /// The time (seconds) of the same work on one device, which
  /// kScalingEfficiency divides by each sample's time.
  void SetReferenceTime(double seconds) { reference_s_ = seconds; }

  /// Times `iteration` with host clocks under the engine's stopping rule:
  /// the wall clock, or `clock` (ThreadCpuClock: the thread's CPU time).
  void MeasureHost(const std::function<void()>& iteration, Clock& clock = SteadyClock());
  /// Runs the engine's sampling loop over a timing strategy of the case's own
  /// (CUDA events, a collective's barrier-bracketed loop): `warmup` is called
  /// untimed, `sample` returns seconds per iteration. Samples are marked with
  /// the state's throttle source when it has one.
  void MeasureSamples(const std::function<void()>& warmup, const std::function<double()>& sample);
  /// Records a measurement taken elsewhere (the same rules as above apply).
  void Record(const Measurement& m);
  /// Records one sample of a case whose metrics are all value kinds: one
  /// value per metric, in order, from work that took `seconds` of wall time.
  /// Fails the case when the count does not match or a kind is not a value.
  void RecordValues(const std::vector<double>& values, double seconds);
  /// As above, for work measured as one device sample (MeasureOnce: its
  /// seconds, whether the device throttled, the energy it drew) that
  /// produced `tokens` tokens: the case then reports its power, energy and
  /// J/token as for a timed device case, or why they are unavailable.
  void RecordValues(const std::vector<double>& values, const Measurement& around, double tokens);
  /// Adds a sentence to the reason a measured case reports (what it could
  /// not report, what it left out).
  void AddNote(const std::string& note);

  /// The engine options this case runs under.
  const EngineOptions& options() const { return options_; }
  /// The injected slowdown (a fraction of the measured time), 0 when none.
  double inject_fraction() const { return inject_fraction_; }
  /// The work to add to this case (--inject-work), a fraction of its own; 0
  /// when none. A case that can add to its own work asks AddWork for its
  /// size; the runner fails a case given work to add that never asked.
  double work_fraction() const { return work_fraction_; }
  void set_work_fraction(double fraction) { work_fraction_ = fraction; }
  /// `units` (elements or bytes the case's loop goes over) with the added
  /// work: units + round(units × work_fraction()), the case's loop to run over
  /// that many while its metrics still count `units`, so that its time and
  /// its instruction count grow by that fraction of the loop's. Records what
  /// was added (added_work()).
  size_t AddWork(size_t units, const char* what);
  /// What AddWork added, as a sentence for the case's reason; empty if none.
  const std::string& added_work() const { return added_work_; }
  /// Where device samples read clocks and throttle reasons; null on the host.
  ThrottleSource* throttle_source() const { return throttle_; }
  void set_throttle_source(ThrottleSource* source) { throttle_ = source; }

  /// The case cannot run here; it is reported as skipped, not failed.
  void Skip(std::string reason);
  /// The case ran wrong (bad result, bad parameter); reported as failed.
  void Fail(std::string reason);
  /// The case reached its timeout before it measured all it meant to: it is
  /// reported timed out with `reason`, with the samples recorded so far.
  /// A failed or skipped case stays so.
  void TimeOut(std::string reason);

  bool skipped() const { return status_ == CaseStatus::kSkipped; }
  bool failed() const { return status_ == CaseStatus::kFailed; }
  bool measured() const { return !samples_.empty(); }
  /// The samples recorded so far (ceilings read their cases' best from them).
  const std::vector<Sample>& samples() const { return samples_; }
  /// Why the case stopped or was skipped or failed, so far.
  const std::string& reason() const { return reason_; }

  /// The case's samples and outcome. A case that neither measured nor skipped
  /// nor failed is reported as failed: a silent case is a broken case.
  CaseResult TakeResult();

 private:
  BenchmarkId id_;
  std::vector<MetricKind> metrics_;
  EngineOptions options_;
  double inject_fraction_;
  double work_fraction_ = 0;
  std::string added_work_;
  double bytes_ = 0, flops_ = 0, alg_bytes_ = 0, bus_factor_ = 1, roof_ = 0;
  double tokens_ = 0, peak_flops_ = 0, reference_s_ = 0;
  std::vector<Sample> samples_;
  CaseStatus status_ = CaseStatus::kUnspecified;
  std::string reason_;
  std::string notes_;  // AddNote's sentences, appended to a measured case's reason
  double noise_ = 0;
  double sampling_s_ = 0;  // summed over Record calls
  CaseEnergy energy_;      // the energy metrics, appended by TakeResult
  ThrottleSource* throttle_ = nullptr;
};

}  // namespace perfgate::suites
