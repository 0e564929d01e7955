#include "suites/collectives/lockstep.h"

#include <algorithm>
#include <vector>

#include "common/status_macros.h"

namespace perfgate::suites::collectives {

absl::StatusOr<Measurement> MeasureInLockstep(World& world, const EngineOptions& options,
                                              ThrottleSource* throttle, double inject_fraction,
                                              const std::function<absl::Status()>& warmup,
                                              const std::function<absl::StatusOr<double>()>& sample) {
  Clock& clock = SteadyClock();
  const double start = clock.Now();
  for (unsigned i = 0; i < std::max(1u, options.warmup_runs); ++i) {
    PERFGATE_RETURN_IF_ERROR(world.Barrier());
    PERFGATE_RETURN_IF_ERROR(warmup());
  }
  const double default_mhz = throttle != nullptr ? throttle->DefaultSmClockMhz() : 0.0;
  StoppingRule rule(options);
  Measurement m;
  // This rank's device energy over the samples; the warm-up is outside.
  const absl::StatusOr<double> energy_before =
      throttle != nullptr ? throttle->EnergyJoules() : absl::StatusOr<double>(0.0);
  const double sampling_start = clock.Now();
  while (true) {
    PERFGATE_RETURN_IF_ERROR(world.Barrier());
    const ThrottleReading before = throttle != nullptr ? throttle->Read() : ThrottleReading{};
    auto seconds = sample();
    PERFGATE_RETURN_IF_ERROR(seconds);
    const ThrottleReading after = throttle != nullptr ? throttle->Read() : ThrottleReading{};
    double t = *seconds;
    if (inject_fraction > 0) {
      // The known slowdown that proves the gate: real work, timed with the rest.
      const double t0 = clock.Now();
      BusyWork(t * inject_fraction, clock);
      t += clock.Now() - t0;
    }
    const bool throttled = throttle != nullptr && IsThrottled(before, after, default_mhz);
    std::vector<double> agreed{t, throttled ? 1.0 : 0.0};
    PERFGATE_RETURN_IF_ERROR(world.AllReduceMax(agreed));
    int64_t verdict = static_cast<int64_t>(rule.Add(agreed[0], agreed[1] > 0, clock.Now() - start));
    PERFGATE_RETURN_IF_ERROR(world.Broadcast(verdict));
    m.sample_s.push_back(agreed[0]);
    m.throttled.push_back(agreed[1] > 0);
    if (agreed[1] > 0) ++m.throttled_count;
    m.reason = static_cast<StopReason>(verdict);
    if (m.reason != StopReason::kContinue) break;
  }
  m.noise = rule.noise();
  if (throttle != nullptr) RecordEnergy(energy_before, throttle->EnergyJoules(), clock.Now() - sampling_start, m);
  return m;
}

}  // namespace perfgate::suites::collectives
