#include "measure/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

#include <span>

#include "absl/strings/str_format.h"
#include "measure/counts.h"

namespace perfgate {

const char* ToString(StopReason r) {
  switch (r) {
    case StopReason::kContinue: return "continue";
    case StopReason::kNoiseTarget: return "noise_target";
    case StopReason::kPlateau: return "plateau";
    case StopReason::kTimeout: return "timeout";
    case StopReason::kSampleCount: return "sample_count";
  }
  return "continue";
}

StoppingRule::StoppingRule(const EngineOptions& options) : options_(options) {}

StopReason StoppingRule::Add(double sample_s, bool throttled, double elapsed_s) {
  total_s_ += sample_s;
  if (!throttled) {
    times_.push_back(sample_s);
    sum_ += sample_s;
    sum_sq_ += sample_s * sample_s;
    const double n = static_cast<double>(times_.size());
    if (times_.size() >= 2) {
      const double mean = sum_ / n;
      const double var = std::max(0.0, (sum_sq_ - n * mean * mean) / (n - 1));
      noise_ = mean > 0 ? std::sqrt(var) / mean : 0.0;
    }
    // Like nvbench, the noise is tracked from the fifth sample on: before that
    // it says more about the sample count than about the case.
    if (times_.size() >= 5) noise_history_.push_back(noise_);
  }
  ++count_;
  if (options_.sample_count > 0 && count_ >= options_.sample_count) return StopReason::kSampleCount;
  if (elapsed_s >= options_.timeout_s || count_ >= options_.max_samples) {
    return StopReason::kTimeout;
  }
  if (options_.sample_count > 0) return StopReason::kContinue;
  if (times_.size() < options_.min_samples || total_s_ < options_.min_time_s ||
      noise_history_.empty()) {
    return StopReason::kContinue;
  }
  if (noise_ < options_.max_noise) return StopReason::kNoiseTarget;
  // Noise above target but no longer moving: more samples will not help.
  if (noise_history_.size() >= options_.plateau_window) {
    std::span<const double> window(noise_history_.data() + noise_history_.size() -
                                       options_.plateau_window,
                                   options_.plateau_window);
    const double current = noise_history_.back();
    double ss = 0;
    for (double x : window) ss += (x - current) * (x - current);
    const double spread = std::sqrt(ss / static_cast<double>(window.size() - 1));
    if (current > 0 && spread / current < options_.plateau_rel_stdev) return StopReason::kPlateau;
  }
  return StopReason::kContinue;
}

void Clock::Sleep(double seconds) {
  if (seconds > 0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

bool IsThrottled(const ThrottleReading& before, const ThrottleReading& after,
                 double default_clock_mhz) {
  for (const ThrottleReading* r : {&before, &after}) {
    if (!r->valid) continue;
    if ((r->reasons & kThrottleReasonMask) != 0) return true;
    if (default_clock_mhz > 0 && r->sm_clock_mhz > 0 &&
        r->sm_clock_mhz < kThrottleClockRatio * default_clock_mhz) {
      return true;
    }
  }
  return false;
}

namespace {

class Steady final : public Clock {
 public:
  double Now() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

absl::StatusOr<double> ThrottleSource::EnergyJoules() {
  return absl::UnimplementedError("this device source reads no energy counter");
}

void RecordEnergy(const absl::StatusOr<double>& before, const absl::StatusOr<double>& after,
                  double window_s, Measurement& m) {
  if (!before.ok() || !after.ok()) {
    m.energy_unavailable = std::string((before.ok() ? after : before).status().message());
  } else if (!(*after > *before) || !(window_s > 0)) {
    m.energy_unavailable =
        absl::StrFormat("the energy counter did not advance over %.3g s of samples", window_s);
  } else {
    m.energy_j = *after - *before;
    m.energy_window_s = window_s;
  }
}

Clock& SteadyClock() {
  static Steady clock;
  return clock;
}

double ThreadCpuClock::Now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9 + slept_;
}

void ThreadCpuClock::Sleep(double seconds) { slept_ += std::max(0.0, seconds); }

void BusyWork(double seconds, Clock& clock) {
  const double end = clock.Now() + seconds;
  volatile double acc = 1.0;
  while (clock.Now() < end) {
    for (int i = 0; i < 64; ++i) acc = acc * 1.0000001 + 1e-9;
  }
}

Measurement MeasureSamples(const std::function<void()>& warmup,
                           const std::function<double()>& sample, const EngineOptions& options,
                           Clock& clock, ThrottleSource* throttle, double backoff_s) {
  Measurement m;
  const double start = clock.Now();
  for (unsigned i = 0; i < options.warmup_runs; ++i) warmup();
  StoppingRule rule(options);
  const double default_mhz = throttle != nullptr ? throttle->DefaultSmClockMhz() : 0.0;
  unsigned throttled_in_a_row = 0;
  const absl::StatusOr<double> energy_before =
      throttle != nullptr ? throttle->EnergyJoules() : absl::StatusOr<double>(0.0);
  const double sampling_start = clock.Now();
  double backed_off = 0;
  while (true) {
    const ThrottleReading before = throttle != nullptr ? throttle->Read() : ThrottleReading{};
    // Under callgrind (perfgate-agent ab --count), the samples alone are counted.
    StartCounting();
    const double t = sample();
    StopCounting();
    const ThrottleReading after = throttle != nullptr ? throttle->Read() : ThrottleReading{};
    const bool throttled = throttle != nullptr && IsThrottled(before, after, default_mhz);
    m.sample_s.push_back(t);
    m.throttled.push_back(throttled);
    if (throttled) {
      ++m.throttled_count;
      // A card that keeps throttling needs a moment to cool or to leave its
      // power cap; sampling straight on would only collect more marked samples.
      if (++throttled_in_a_row >= 3) {
        clock.Sleep(backoff_s);
        backed_off += backoff_s;
        throttled_in_a_row = 0;
      }
    } else {
      throttled_in_a_row = 0;
    }
    m.reason = rule.Add(t, throttled, clock.Now() - start);
    if (m.reason != StopReason::kContinue) break;
  }
  m.noise = rule.noise();
  const double sampling_end = clock.Now();
  m.sampling_s = std::max(0.0, sampling_end - sampling_start - backed_off);
  if (throttle != nullptr) {
    RecordEnergy(energy_before, throttle->EnergyJoules(), sampling_end - sampling_start, m);
  }
  return m;
}

Measurement MeasureOnce(const std::function<void()>& work, Clock& clock, ThrottleSource* throttle) {
  EngineOptions once;
  once.warmup_runs = 0;
  once.sample_count = 1;
  const auto timed = [&] {
    const double t0 = clock.Now();
    work();
    return clock.Now() - t0;
  };
  return MeasureSamples([] {}, timed, once, clock, throttle, /*backoff_s=*/0);
}

Measurement MeasureHost(const std::function<void()>& iteration, const EngineOptions& options,
                            double inject_fraction, Clock& clock) {
  return MeasureSamples(
      iteration,
      [&] {
        const double t0 = clock.Now();
        iteration();
        if (inject_fraction > 0) BusyWork((clock.Now() - t0) * inject_fraction, clock);
        return clock.Now() - t0;
      },
      options, clock);
}

}  // namespace perfgate
