// The load generator and the continuous-batching scheduler (serving.h).
#include "suites/inference/serving.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/stats.h"
#include "suites/seed.h"
#include "suites/transformer/transformer.h"

namespace perfgate::suites::inference {
namespace {

// How long before an arrival the idle server stops sleeping and polls.
constexpr double kPollSeconds = 0.002;

// Element i of the uniform [0, 1) stream seeded by `seed` (53 bits), the same
// with every compiler and library, so a seed fixes the arrival sequence.
double Unit(uint64_t seed, uint64_t i) {
  return static_cast<double>(Mix64(seed * kGoldenGamma + i) >> 11) * 0x1p-53;
}

int UniformInt(uint64_t seed, uint64_t i, int lo, int hi) {
  return std::min(hi, lo + static_cast<int>(Unit(seed, i) * (hi - lo + 1)));
}

// A request in the system.
struct Seq {
  size_t id = 0;
  std::vector<int32_t> context;  // prompt, then the tokens produced so far
  int output = 0;     // tokens to produce
  int generated = 0;
  int cached = 0;     // positions in its slot's cache (0: to prefill)
  int blocks = 0;     // KV blocks held
  int slot = -1;
};

class Server {
 public:
  Server(const ServeOptions& o, int vocab, ServeModel& model, Clock& clock, Clock& deadline, double stop_at)
      : o_(o), vocab_(vocab), model_(model), clock_(clock), deadline_(deadline), stop_at_(stop_at),
        free_blocks_(o.kv_blocks) {
    for (int s = o.max_running - 1; s >= 0; --s) free_slots_.push_back(s);
  }

  ServeRun Run() {
    t0_ = clock_.Now();
    if (o_.rate > 0) {
      next_arrival_ = Gap(0);
    } else {
      for (int u = 0; u < o_.users && MayIssue(0); ++u) Issue(0);
    }
    while (true) {
      if (deadline_.Now() >= stop_at_) {
        cut_short_ = true;
        break;
      }
      double now = clock_.Now() - t0_;
      if (o_.rate > 0) ReleaseArrivals(now);
      if (running_.empty() && waiting_.empty()) {
        if (o_.rate <= 0 || !MayIssue(next_arrival_)) break;
        // Sleep until shortly before the arrival, then poll the clock: waking
        // from a sleep can take milliseconds on a busy machine, which would
        // count as the request's queueing delay. A clock that advances when
        // it sleeps is slept to the arrival itself.
        // Never past the deadline: a rate of one a day would sleep a day.
        const double slack = clock_.SleepsExactly() ? 0.0 : kPollSeconds;
        const double left = std::max(0.0, stop_at_ - deadline_.Now());
        if (next_arrival_ - now > slack) clock_.Sleep(std::min(next_arrival_ - now - slack, left));
        continue;
      }
      Iterate();
    }
    return Result();
  }

 private:
  double Gap(size_t i) const { return -std::log1p(-Unit(o_.seed, 3 * i)) / o_.rate; }
  bool Measured(size_t i) const { return i >= static_cast<size_t>(o_.warmup_requests); }

  // Whether request issued_ (arriving at `at`) is part of the run: every
  // warm-up and measured request, then more while the measured arrivals
  // span less than min_seconds.
  bool MayIssue(double at) const {
    const size_t w = static_cast<size_t>(o_.warmup_requests);
    if (issued_ < w + static_cast<size_t>(o_.requests)) return true;
    return at - times_[w].arrival < o_.min_seconds;
  }

  void Issue(double at) {
    const size_t i = issued_++;
    Seq s;
    s.id = i;
    const int prompt = UniformInt(o_.seed, 3 * i + 1, o_.prompt_min, o_.prompt_max);
    s.output = UniformInt(o_.seed, 3 * i + 2, o_.output_min, o_.output_max);
    s.context = transformer::SyntheticTokens(prompt, vocab_, Mix64(o_.seed ^ (i + 1)));
    times_.push_back({at, -1, -1, -1, prompt, s.output});
    if (Measured(i)) ++measured_in_system_;
    waiting_.push_back(std::move(s));
  }

  void ReleaseArrivals(double now) {
    while (next_arrival_ <= now && MayIssue(next_arrival_)) {
      Issue(next_arrival_);
      next_arrival_ += Gap(issued_);
    }
  }

  int BlocksFor(size_t tokens) const {
    return static_cast<int>((tokens + o_.block_tokens - 1) / o_.block_tokens);
  }

  // Recompute: the newest running sequence gives back its blocks and slot
  // and waits at the head of the queue to be prefilled again.
  void PreemptNewest() {
    Seq s = std::move(running_.back());
    running_.pop_back();
    free_blocks_ += s.blocks;
    free_slots_.push_back(s.slot);
    s.blocks = 0;
    s.cached = 0;
    s.slot = -1;
    if (measured_in_system_ > 0) ++preemptions_;
    waiting_.push_front(std::move(s));
  }

  // Every running decode gets the block its next token needs, oldest first,
  // preempting the newest while none is free. True when one was preempted.
  bool ReserveDecodeBlocks() {
    bool preempted = false;
    for (size_t i = 0; i < running_.size();) {
      Seq& s = running_[i];
      if (s.cached == 0 || BlocksFor(s.context.size()) <= s.blocks) {
        ++i;
      } else if (free_blocks_ > 0) {
        --free_blocks_;
        ++s.blocks;
        ++i;
      } else {
        PreemptNewest();
        preempted = true;
      }
    }
    return preempted;
  }

  // First come, first served: the queue's head is admitted while a slot
  // and the blocks for its whole context are free.
  void Admit(double now) {
    while (!waiting_.empty() && !free_slots_.empty() && BlocksFor(waiting_.front().context.size()) <= free_blocks_) {
      Seq s = std::move(waiting_.front());
      waiting_.pop_front();
      s.blocks = BlocksFor(s.context.size());
      free_blocks_ -= s.blocks;
      s.slot = free_slots_.back();
      free_slots_.pop_back();
      if (times_[s.id].scheduled < 0) times_[s.id].scheduled = now;
      running_.push_back(std::move(s));
    }
  }

  // One iteration: blocks, admissions, one model step over every running
  // sequence (prefills and decodes together), then its tokens.
  void Iterate() {
    if (!ReserveDecodeBlocks()) Admit(clock_.Now() - t0_);
    std::vector<transformer::SlotRun> runs;
    for (const Seq& s : running_) {
      if (s.cached == 0) {
        runs.push_back({s.slot, 0, s.context});
      } else {
        runs.push_back({s.slot, s.cached, {s.context.back()}});
      }
    }
    if (runs.empty()) return;  // the only sequence was preempted; it is admitted next
    const std::vector<int32_t> next = model_.Step(runs);
    const double t = clock_.Now() - t0_;
    ++iterations_;
    if (measured_in_system_ > 0) {
      occupancy_sum_ += 1.0 - static_cast<double>(free_blocks_) / o_.kv_blocks;
      ++occupancy_n_;
    }
    std::vector<Seq> still;
    for (size_t i = 0; i < running_.size(); ++i) {
      Seq& s = running_[i];
      s.cached = static_cast<int>(s.context.size());
      s.context.push_back(next[i]);
      if (++s.generated == 1) times_[s.id].first_token = t;
      if (s.generated < s.output) {
        still.push_back(std::move(s));
        continue;
      }
      times_[s.id].finish = t;
      free_blocks_ += s.blocks;
      free_slots_.push_back(s.slot);
      if (Measured(s.id)) --measured_in_system_;
      if (o_.rate <= 0 && MayIssue(t)) Issue(t);  // the user's next request
    }
    running_ = std::move(still);
  }

  ServeRun Result() const {
    ServeRun r;
    const size_t w = static_cast<size_t>(o_.warmup_requests);
    double first = 0, last = 0;
    for (const RequestTimes& t : times_) r.output_tokens += t.output;
    for (size_t i = w; i < times_.size(); ++i) {
      if (i == w || times_[i].arrival < first) first = times_[i].arrival;
      last = std::max(last, times_[i].finish);
      r.measured.push_back(times_[i]);
    }
    r.window_s = last - first;
    r.preemptions = preemptions_;
    r.kv_occupancy = occupancy_n_ > 0 ? occupancy_sum_ / occupancy_n_ : 0;
    r.iterations = iterations_;
    r.cut_short = cut_short_;
    return r;
  }

  const ServeOptions& o_;
  int vocab_;
  ServeModel& model_;
  Clock& clock_;
  Clock& deadline_;
  double stop_at_;
  bool cut_short_ = false;
  double t0_ = 0, next_arrival_ = 0;
  size_t issued_ = 0;
  std::vector<RequestTimes> times_;  // every request issued, by id
  std::deque<Seq> waiting_;
  std::vector<Seq> running_;         // in admission order
  std::vector<int> free_slots_;
  int free_blocks_;
  int measured_in_system_ = 0;
  int preemptions_ = 0, iterations_ = 0;
  double occupancy_sum_ = 0;
  int occupancy_n_ = 0;
};

std::vector<double> Ms(const ServeRun& run, double (*of)(const RequestTimes&)) {
  std::vector<double> v;
  for (const RequestTimes& r : run.measured) v.push_back(of(r) * 1e3);
  return v;
}

double Ttft(const RequestTimes& r) { return r.first_token - r.arrival; }
double Tpot(const RequestTimes& r) { return (r.finish - r.first_token) / (r.output - 1); }

// What Validate adds to a run that can finish: the bounds of serving.h.
std::string WithinBounds(const ServeOptions& o) {
  const int64_t issued = int64_t{o.warmup_requests} + o.requests;
  const char* why = " (docs/serving.md: a run keeps every request's times)";
  if (issued > kMaxServeRequests || o.users > kMaxServeRequests) {
    return absl::StrCat("requests=", o.requests, ", warmup=", o.warmup_requests, ", users=", o.users,
                        ": at most ", kMaxServeRequests, " requests in all and as many users", why);
  }
  if (issued * (int64_t{o.prompt_max} + o.output_max) > kMaxServeTokens) {
    return absl::StrCat(issued, " requests of up to ", o.prompt_max + o.output_max, " tokens: at most ",
                        kMaxServeTokens, " tokens in all (docs/serving.md: every context may be queued at once)");
  }
  if (o.max_running > kMaxServeRunning) {
    return absl::StrCat("max_running=", o.max_running, ": at most ", kMaxServeRunning,
                        " (the model's cache holds a slot for each)");
  }
  if (o.kv_blocks > kMaxServeKvBlocks || o.block_tokens > kMaxServeBlockTokens) {
    return absl::StrCat("kv_blocks=", o.kv_blocks, ", block_tokens=", o.block_tokens, ": at most ",
                        kMaxServeKvBlocks, " blocks of at most ", kMaxServeBlockTokens, " tokens");
  }
  if (o.min_seconds > kMaxServeSeconds || o.rate * o.min_seconds > kMaxServeRequests) {
    return absl::StrCat("min_s=", o.min_seconds, " at rate ", o.rate, ": at most ", kMaxServeSeconds,
                        " s and ", kMaxServeRequests, " arrivals expected in it", why);
  }
  return "";
}

}  // namespace

std::string Validate(const ServeOptions& o) {
  if (!(o.rate > 0) && o.users <= 0) return "rate must be positive (or users, for the closed loop, with rate=0)";
  if (o.rate > 0 && o.users > 0) return "set rate (open loop) or users (closed loop), not both";
  if (o.prompt_min < 1 || o.prompt_max < o.prompt_min) return "prompt lengths must satisfy 1 <= min <= max";
  if (o.output_min < 2 || o.output_max < o.output_min) return "output lengths must satisfy 2 <= min <= max";
  if (o.block_tokens < 1 || o.kv_blocks < 1 || o.max_running < 1) {
    return "kv_blocks, block_tokens and max_running must be positive";
  }
  if (int64_t{o.kv_blocks} * o.block_tokens < int64_t{o.prompt_max} + o.output_max) {
    return absl::StrCat("a KV budget of ", o.kv_blocks, " blocks of ", o.block_tokens,
                        " tokens cannot hold one request of ", o.prompt_max + o.output_max,
                        " tokens: raise kv_blocks");
  }
  if (o.requests < 1 || o.warmup_requests < 0) return "requests must be positive and warmup not negative";
  if (!(o.min_seconds >= 0)) return "min_seconds must not be negative";
  return WithinBounds(o);
}

HostServeModel::HostServeModel(transformer::HostModel& model, int slots) : model_(model) { model_.OpenSlots(slots); }

std::vector<int32_t> HostServeModel::Step(const std::vector<transformer::SlotRun>& runs) {
  const std::vector<float> logits = model_.StepSlots(runs);
  const int vocab = model_.config().vocab;
  std::vector<int32_t> next(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) next[i] = transformer::Argmax(logits.data() + i * vocab, vocab);
  return next;
}

ServeRun Serve(const ServeOptions& o, int vocab, ServeModel& model, Clock& clock, Clock& deadline, double stop_at) {
  return Server(o, vocab, model, clock, deadline, stop_at).Run();
}

ServeSummary Summarize(const ServeRun& run, const ServeOptions& o) {
  ServeSummary s;
  s.requests = run.measured.size();
  const std::vector<double> ttft = Ms(run, Ttft), tpot = Ms(run, Tpot);
  const std::vector<double> queue = Ms(run, [](const RequestTimes& r) { return r.scheduled - r.arrival; });
  const std::vector<double> e2e = Ms(run, [](const RequestTimes& r) { return r.finish - r.arrival; });
  double tokens = 0, good = 0;
  for (size_t i = 0; i < run.measured.size(); ++i) {
    tokens += run.measured[i].output;
    if (ttft[i] <= o.ttft_objective_ms && tpot[i] <= o.tpot_objective_ms) ++good;
  }
  const double window = run.window_s > 0 ? run.window_s : 1e-9;
  s.requests_per_s = static_cast<double>(s.requests) / window;
  s.output_tokens_per_s = tokens / window;
  s.goodput = good / window;
  s.ttft_p50 = stats::Quantile(ttft, 0.5);
  s.ttft_p90 = stats::Quantile(ttft, 0.9);
  s.ttft_p99 = stats::Quantile(ttft, 0.99);
  s.tpot_p50 = stats::Quantile(tpot, 0.5);
  s.tpot_p90 = stats::Quantile(tpot, 0.9);
  s.tpot_p99 = stats::Quantile(tpot, 0.99);
  s.queue_p99 = stats::Quantile(queue, 0.99);
  s.e2e_p99 = stats::Quantile(e2e, 0.99);
  s.preemptions = run.preemptions;
  s.kv_occupancy = run.kv_occupancy;
  return s;
}

bool MeetsObjectives(const ServeRun& run, const ServeOptions& o, double q) {
  return stats::Quantile(Ms(run, Ttft), q) <= o.ttft_objective_ms &&
         stats::Quantile(Ms(run, Tpot), q) <= o.tpot_objective_ms;
}

Knee FindKnee(std::vector<std::pair<double, bool>> met) {
  std::sort(met.begin(), met.end());
  if (met.empty()) return {KneeBound::kBelowRange, 0};
  Knee knee{KneeBound::kBelowRange, met.front().first};
  for (const auto& [rate, ok] : met) {
    if (!ok) return knee;
    knee = {KneeBound::kInside, rate};
  }
  knee.bound = KneeBound::kAboveRange;
  return knee;
}

}  // namespace perfgate::suites::inference
