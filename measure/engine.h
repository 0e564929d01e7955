// The measurement engine for host-timed cases (docs/measurement.md): warm-up,
// then samples until the stopping rule says enough — the noise target met
// after a minimum of samples and time, the noise plateaued above target, or
// the per-case timeout. The rule itself is pure logic, so it is tested with
// made-up sample times; the clock is an interface for the same reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace perfgate {

/// Options of the stopping rule and the sampling loop. Defaults follow
/// nvbench's stdrel criterion.
struct EngineOptions {
  unsigned warmup_runs = 1;        // untimed calls before the first sample
  unsigned min_samples = 10;       // never stop before this many samples
  double min_time_s = 0.5;         // nor before the samples sum to this
  double max_noise = 0.005;        // stdev/mean target (0.5 %)
  double timeout_s = 15.0;         // per case, wall time including warm-up
  unsigned plateau_window = 32;    // noise values looked at for a plateau
  double plateau_rel_stdev = 0.05; // plateau when noise varies less than this
  unsigned max_samples = 100000;   // a hard cap, reported as a timeout
  // When > 0, take exactly this many samples (throttled ones included) and
  // ignore the noise target: A/B blocks must be the same size on both sides
  // so that neither side's pooled samples outweigh the other's. The timeout
  // still ends a block that cannot finish.
  unsigned sample_count = 0;
};

/// Why sampling stopped.
enum class StopReason { kContinue, kNoiseTarget, kPlateau, kTimeout, kSampleCount };

/// "noise_target", "plateau", "timeout", "sample_count" or "continue".
const char* ToString(StopReason r);

/// nvbench-style stdrel stopping rule over unthrottled sample times.
class StoppingRule {
 public:
  explicit StoppingRule(const EngineOptions& options);

  /// Records one sample (seconds). Throttled samples count toward the time
  /// spent but not toward the statistics. `elapsed_s` is the case's wall time
  /// so far. Returns whether to stop and why.
  StopReason Add(double sample_s, bool throttled, double elapsed_s);

  /// Current relative noise (stdev/mean, Bessel) of the unthrottled samples.
  double noise() const { return noise_; }
  /// Unthrottled samples recorded.
  size_t samples() const { return times_.size(); }

 private:
  EngineOptions options_;
  std::vector<double> times_;
  std::vector<double> noise_history_;
  double total_s_ = 0;
  unsigned count_ = 0;  // all samples, throttled included
  double noise_ = 0;
  double sum_ = 0, sum_sq_ = 0;
};

/// A monotonic clock in seconds; tests substitute a fake one.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual double Now() = 0;
  /// Waits `seconds` (the throttle back-off); a fake clock just advances.
  virtual void Sleep(double seconds);
  /// Whether Sleep ends exactly when asked (a clock that advances rather
  /// than waits), so that whoever waits on it need not poll the last stretch.
  virtual bool SleepsExactly() const { return false; }
};

/// std::chrono::steady_clock.
Clock& SteadyClock();

/// A clock of the calling thread's CPU time that sleeps by advancing: work
/// timed against it (a host kernel, a serving run) counts its own thread's
/// work, leaving out the time other processes held the CPU (a shared CI
/// machine) and the time a sleep overran. One per measurement; valid while
/// one thread does the work.
class ThreadCpuClock : public Clock {
 public:
  double Now() override;
  void Sleep(double seconds) override;
  bool SleepsExactly() const override { return true; }

 private:
  double slept_ = 0;
};

/// The device clock and throttle reasons read around one sample.
struct ThrottleReading {
  bool valid = false;        // false when nothing could be read (no NVML)
  double sm_clock_mhz = 0;   // current SM clock
  uint64_t reasons = 0;      // NVML clocks-event reasons bitmask
};

/// NVML clocks-event reasons that make a sample throttled (docs/measurement.md):
/// SW power cap 0x4, HW slowdown 0x8, SW thermal 0x20, HW thermal 0x40,
/// HW power brake 0x80.
inline constexpr uint64_t kThrottleReasonMask = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
/// A sample whose SM clock fell below this fraction of the default is throttled.
inline constexpr double kThrottleClockRatio = 0.75;

/// Where the sampling loop reads clocks and throttle reasons; the device
/// probe supplies an NVML-backed one, tests a scripted one.
class ThrottleSource {
 public:
  virtual ~ThrottleSource() = default;
  /// Reads the current SM clock and the reasons set since the last read.
  virtual ThrottleReading Read() = 0;
  /// The SM clock the device runs at when nothing holds it back (MHz).
  virtual double DefaultSmClockMhz() const = 0;
  /// The device's cumulative energy counter in joules (NVML's total energy
  /// consumption, Volta and later), read just before the first timed sample
  /// and just after the last; an error saying why where the device or the
  /// driver has no counter.
  virtual absl::StatusOr<double> EnergyJoules();
};

/// Whether a sample bracketed by `before` and `after` counts as throttled:
/// a throttle reason set in either, or either clock below
/// kThrottleClockRatio x `default_clock_mhz`. Invalid readings say nothing.
bool IsThrottled(const ThrottleReading& before, const ThrottleReading& after,
                 double default_clock_mhz);

/// What a measurement produced.
struct Measurement {
  std::vector<double> sample_s;  // one per sample, time per iteration
  std::vector<bool> throttled;   // same length
  StopReason reason = StopReason::kContinue;
  double noise = 0;
  unsigned throttled_count = 0;
  /// Wall seconds of the timed samples alone, from the first sample to the
  /// last (warm-up and back-offs excluded); 0 when not known.
  double sampling_s = 0;
  /// Joules the device drew from just before the first timed sample to just
  /// after the last (its energy counter; the warm-up is outside), over
  /// energy_window_s wall seconds. Unset where no counter was read: then
  /// energy_unavailable says why, or is empty where there was no device.
  std::optional<double> energy_j;
  double energy_window_s = 0;
  std::string energy_unavailable;
};

/// Runs `work` once as one sample: its wall seconds, whether the device
/// throttled meanwhile, and the energy it drew, read from `throttle` around
/// it (nothing read when it is null). For work that reports values of its
/// own, timed as a whole (a serving run).
Measurement MeasureOnce(const std::function<void()>& work, Clock& clock, ThrottleSource* throttle);

/// Records in `m` the energy a device drew between two readings of its
/// counter (ThrottleSource::EnergyJoules) `window_s` wall seconds apart:
/// energy_j and energy_window_s, or, where a reading failed or the counter
/// did not advance (its update period may exceed the window), the reason in
/// energy_unavailable and no energy: never zero joules.
void RecordEnergy(const absl::StatusOr<double>& before, const absl::StatusOr<double>& after,
                  double window_s, Measurement& m);

/// The sampling loop every timing strategy shares: `warmup` once per
/// options.warmup_runs (untimed), then `sample` — which does the work and
/// returns the time per iteration in seconds — until the stopping rule
/// stops. With a throttle source, each sample is bracketed by readings and
/// marked; after three throttled samples in a row the loop backs off for
/// `backoff_s` on `clock` before going on.
Measurement MeasureSamples(const std::function<void()>& warmup,
                           const std::function<double()>& sample, const EngineOptions& options,
                           Clock& clock = SteadyClock(), ThrottleSource* throttle = nullptr,
                           double backoff_s = 0.05);

/// Times `iteration` on the host: warm-up, then one call per sample until the
/// stopping rule stops. When `inject_fraction` > 0, each sample also performs
/// real busy work for that fraction of the iteration's measured time, inside
/// the timed region — the known slowdown that proves the gate works.
Measurement MeasureHost(const std::function<void()>& iteration, const EngineOptions& options,
                            double inject_fraction = 0.0, Clock& clock = SteadyClock());

/// Spins doing arithmetic until `seconds` have passed on `clock`.
void BusyWork(double seconds, Clock& clock);

}  // namespace perfgate
