#include "common/engine.h"

#include <chrono>
#include <cmath>

#include <span>

namespace perfgate {

const char* ToString(StopReason r) {
  switch (r) {
    case StopReason::kContinue: return "continue";
    case StopReason::kNoiseTarget: return "noise_target";
    case StopReason::kPlateau: return "plateau";
    case StopReason::kTimeout: return "timeout";
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
  if (elapsed_s >= options_.timeout_s || count_ >= options_.max_samples) {
    return StopReason::kTimeout;
  }
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

namespace {

class Steady final : public Clock {
 public:
  double Now() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

Clock& SteadyClock() {
  static Steady clock;
  return clock;
}

void BusyWork(double seconds, Clock& clock) {
  const double end = clock.Now() + seconds;
  volatile double acc = 1.0;
  while (clock.Now() < end) {
    for (int i = 0; i < 64; ++i) acc = acc * 1.0000001 + 1e-9;
  }
}

HostMeasurement MeasureHost(const std::function<void()>& iteration, const EngineOptions& options,
                            double inject_fraction, Clock& clock) {
  HostMeasurement m;
  const double start = clock.Now();
  for (unsigned i = 0; i < options.warmup_runs; ++i) iteration();
  StoppingRule rule(options);
  while (true) {
    const double t0 = clock.Now();
    iteration();
    if (inject_fraction > 0) BusyWork((clock.Now() - t0) * inject_fraction, clock);
    const double t1 = clock.Now();
    m.sample_s.push_back(t1 - t0);
    m.throttled.push_back(false);  // host clocks carry no throttle reasons
    m.reason = rule.Add(t1 - t0, false, t1 - start);
    if (m.reason != StopReason::kContinue) break;
  }
  m.noise = rule.noise();
  return m;
}

}  // namespace perfgate
