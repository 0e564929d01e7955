// A serving run of the model, the way an inference server meets load: a
// seeded load generator (Poisson arrivals at a rate, or N users in a closed
// loop) issues requests whose prompt and output lengths are drawn from
// uniform ranges; a scheduler batches them continuously (iteration-level,
// as vLLM and TensorRT-LLM do) over a KV cache of a bounded number of
// blocks: a request is admitted while the blocks for its context are free,
// and when a running sequence needs a block and none is free the newest
// running sequence is preempted, its blocks freed, and later recomputed
// from its prompt and the tokens it had produced (vLLM's "recompute"
// policy), each one counted. Every request's queueing delay, time to first
// token, time per output token and end-to-end latency are recorded against
// a clock; nothing is simulated but the arrivals — the model really runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "measure/engine.h"
#include "suites/transformer/host_model.h"

namespace perfgate::suites::inference {

/// The knobs of one serving run (docs/serving.md).
struct ServeOptions {
  double rate = 0;        // open loop: Poisson arrivals per second; 0 with users > 0 is the closed loop
  int users = 0;          // closed loop: users each sending the next request when the last completes
  int prompt_min = 8, prompt_max = 24;   // prompt tokens, uniform
  int output_min = 8, output_max = 24;   // output tokens, uniform (at least 2: TPOT needs two)
  int kv_blocks = 32;     // the KV budget, in blocks
  int block_tokens = 8;   // tokens per block
  int max_running = 16;   // sequences one iteration runs at most (the cache's slots)
  int warmup_requests = 8;  // the first requests issued, left out of every statistic
  int requests = 64;      // measured requests at least
  double min_seconds = 0;   // and arrivals spanning at least this long
  double ttft_objective_ms = 50, tpot_objective_ms = 10;  // a request meets both or misses
  uint64_t seed = 1;      // arrivals, lengths and prompts
};

/// The bounds Validate keeps a run within (docs/serving.md), so that what a
/// run holds stays small: every request's times, the contexts queued.
inline constexpr int kMaxServeRequests = 100000;          // warmup + requests; users; rate x min_seconds
inline constexpr int64_t kMaxServeTokens = int64_t{1} << 24;  // (warmup + requests) x (prompt_max + output_max)
inline constexpr int kMaxServeRunning = 256;              // max_running: the model's cache slots
inline constexpr int kMaxServeKvBlocks = 1 << 20;
inline constexpr int kMaxServeBlockTokens = 4096;
inline constexpr double kMaxServeSeconds = 3600;          // min_seconds

/// Empty when the options describe a run that can finish within the bounds
/// above, else what is wrong.
std::string Validate(const ServeOptions& o);

/// One request's times, seconds from the start of the run.
struct RequestTimes {
  double arrival = 0, scheduled = 0, first_token = 0, finish = 0;
  int prompt = 0, output = 0;
};

/// What one serving run produced.
struct ServeRun {
  std::vector<RequestTimes> measured;  // after warm-up, in issue order
  double window_s = 0;       // first measured arrival to last measured finish
  int preemptions = 0;       // recomputations while a measured request was in the system
  double kv_occupancy = 0;   // mean fraction of blocks held over those iterations
  int iterations = 0;
  int64_t output_tokens = 0;  // tokens generated for every request, warm-up included
  // Stopped at Serve's deadline: requests unfinished (finish < 0) are among
  // `measured`, so the run is not to be summarized.
  bool cut_short = false;
};

/// The model a server drives: one iteration over the runs of its slots,
/// returning each run's next token (greedy).
class ServeModel {
 public:
  virtual ~ServeModel() = default;
  virtual std::vector<int32_t> Step(const std::vector<transformer::SlotRun>& runs) = 0;
};

/// The host backend's model as a ServeModel (its cache opened with `slots`).
class HostServeModel : public ServeModel {
 public:
  HostServeModel(transformer::HostModel& model, int slots);
  std::vector<int32_t> Step(const std::vector<transformer::SlotRun>& runs) override;

 private:
  transformer::HostModel& model_;
};

/// Serves requests under `o` (which must Validate) with `model` against
/// `clock`; waits on the clock while nothing is left to run before the next
/// arrival. `vocab` bounds the prompts' tokens. Stops, cut short, once
/// `deadline` reads `stop_at` or later (the per-case timeout, on the wall
/// clock whatever `clock` times), checked before each step and waking from
/// a wait for an arrival by then.
ServeRun Serve(const ServeOptions& o, int vocab, ServeModel& model, Clock& clock, Clock& deadline = SteadyClock(),
               double stop_at = std::numeric_limits<double>::infinity());

/// A run's figures: throughput, percentiles of its requests, goodput.
struct ServeSummary {
  size_t requests = 0;
  double requests_per_s = 0, output_tokens_per_s = 0, goodput = 0;
  double ttft_p50 = 0, ttft_p90 = 0, ttft_p99 = 0;  // ms
  double tpot_p50 = 0, tpot_p90 = 0, tpot_p99 = 0;  // ms
  double queue_p99 = 0, e2e_p99 = 0;                // ms
  double preemptions = 0, kv_occupancy = 0;
};

/// Summarizes a run; goodput counts requests meeting both of o's objectives.
ServeSummary Summarize(const ServeRun& run, const ServeOptions& o);

/// Whether a run meets the objectives at quantile q (0.5, 0.9, 0.99): the
/// q-quantiles of TTFT and TPOT within their objectives.
bool MeetsObjectives(const ServeRun& run, const ServeOptions& o, double q);

/// Where a sweep's knee lies against the rates swept.
enum class KneeBound {
  kInside,      // a rate met the objectives and a higher one missed
  kBelowRange,  // the lowest rate already missed: the knee is lower still
  kAboveRange,  // every rate met: the knee is the top rate or higher
};

/// The knee of a rate sweep.
struct Knee {
  KneeBound bound = KneeBound::kInside;
  double rate = 0;  // inside: the knee; below: the lowest rate; above: the top rate
};

/// The knee of a rate sweep: the highest rate at which the objectives hold
/// there and at every lower rate swept, or where it lies outside the
/// range. `met` pairs each rate with whether its run met the objectives.
Knee FindKnee(std::vector<std::pair<double, bool>> met);

}  // namespace perfgate::suites::inference
