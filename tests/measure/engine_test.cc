#include "measure/engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/support/fake_clock.h"

namespace perfgate {
namespace {

using testing::FakeClock;

EngineOptions Defaults() { return EngineOptions{}; }

TEST(StoppingRule, NeverStopsBeforeMinimumSamplesEvenWhenQuiet) {
  StoppingRule rule(Defaults());
  for (int i = 0; i < 9; ++i) EXPECT_EQ(rule.Add(0.1, false, 0.1 * (i + 1)), StopReason::kContinue);
  EXPECT_EQ(rule.Add(0.1, false, 1.0), StopReason::kNoiseTarget);
  EXPECT_EQ(rule.samples(), 10u);
}

TEST(StoppingRule, NeverStopsBeforeMinimumTime) {
  StoppingRule rule(Defaults());
  double elapsed = 0;
  int n = 0;
  StopReason r = StopReason::kContinue;
  while (r == StopReason::kContinue) {
    elapsed += 0.01;
    ++n;
    r = rule.Add(0.01, false, elapsed);
  }
  EXPECT_EQ(r, StopReason::kNoiseTarget);
  EXPECT_GE(n * 0.01, 0.5 - 1e-9);  // 0.5 s of samples
  EXPECT_LE(n, 51);
}

TEST(StoppingRule, NoisySamplesRunToTheTimeout) {
  EngineOptions o = Defaults();
  o.timeout_s = 3;
  o.plateau_window = 1000000;  // no plateau exit
  StoppingRule rule(o);
  double elapsed = 0;
  StopReason r = StopReason::kContinue;
  for (int i = 0; r == StopReason::kContinue; ++i) {
    const double t = (i % 2) ? 0.01 : 0.02;  // ~33 % noise
    elapsed += t;
    r = rule.Add(t, false, elapsed);
  }
  EXPECT_EQ(r, StopReason::kTimeout);
  EXPECT_GE(elapsed, 3.0);
  EXPECT_GT(rule.noise(), 0.3);
}

TEST(StoppingRule, StopsOnAPlateauAboveTheTarget) {
  StoppingRule rule(Defaults());
  double elapsed = 0;
  StopReason r = StopReason::kContinue;
  int n = 0;
  for (; r == StopReason::kContinue && n < 10000; ++n) {
    const double t = (n % 2) ? 0.010 : 0.012;  // steady ~9 % noise
    elapsed += t;
    r = rule.Add(t, false, elapsed);
  }
  EXPECT_EQ(r, StopReason::kPlateau);
  EXPECT_GT(rule.noise(), Defaults().max_noise);
  EXPECT_LT(elapsed, Defaults().timeout_s);
}

TEST(StoppingRule, ThrottledSamplesAreLeftOutOfTheStatistics) {
  StoppingRule rule(Defaults());
  for (int i = 0; i < 20; ++i) rule.Add(0.1, false, 0.1 * i);
  const double quiet = rule.noise();
  rule.Add(5.0, true, 3.0);  // a throttled outlier
  EXPECT_EQ(rule.samples(), 20u);
  EXPECT_EQ(rule.noise(), quiet);
}

TEST(StoppingRule, AFixedSampleCountIgnoresTheNoiseTargetAndStopsExactlyThere) {
  EngineOptions o = Defaults();
  o.sample_count = 7;
  o.min_samples = 100;  // the rule's minimum must not apply to a fixed count
  StoppingRule rule(o);
  // Quiet samples would meet the noise target long before 7 under the rule.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(rule.Add(0.1, false, 0.1 * (i + 1)), StopReason::kContinue);
  EXPECT_EQ(rule.Add(0.1, false, 0.7), StopReason::kSampleCount);
}

TEST(StoppingRule, AFixedSampleCountCountsThrottledSamplesToo) {
  EngineOptions o = Defaults();
  o.sample_count = 3;
  StoppingRule rule(o);
  EXPECT_EQ(rule.Add(0.1, true, 0.1), StopReason::kContinue);
  EXPECT_EQ(rule.Add(0.1, false, 0.2), StopReason::kContinue);
  EXPECT_EQ(rule.Add(0.1, true, 0.3), StopReason::kSampleCount);
  EXPECT_EQ(rule.samples(), 1u);
}

TEST(StoppingRule, AFixedSampleCountStillEndsAtTheTimeout) {
  EngineOptions o = Defaults();
  o.sample_count = 50;
  o.timeout_s = 1.0;
  StoppingRule rule(o);
  EXPECT_EQ(rule.Add(0.6, false, 0.6), StopReason::kContinue);
  EXPECT_EQ(rule.Add(0.6, false, 1.2), StopReason::kTimeout);
}

TEST(MeasureSamples, TakesExactlyTheFixedCountOfSamplesAfterWarmUp) {
  FakeClock clock;
  EngineOptions o = Defaults();
  o.sample_count = 12;
  o.warmup_runs = 2;
  int warmups = 0, samples = 0;
  const Measurement m = MeasureSamples([&] { ++warmups; },
                                       [&] {
                                         ++samples;
                                         clock.Advance(0.01 * (1 + samples % 3));
                                         return 0.01 * (1 + samples % 3);
                                       },
                                       o, clock);
  EXPECT_EQ(warmups, 2);
  EXPECT_EQ(samples, 12);
  EXPECT_EQ(m.sample_s.size(), 12u);
  EXPECT_EQ(m.reason, StopReason::kSampleCount);
}

TEST(MeasureHost, TimesEachIterationWithTheClock) {
  FakeClock clock;
  clock.set_tick(0.05);  // every Now() advances 50 ms
  int calls = 0;
  EngineOptions o = Defaults();
  Measurement m = MeasureHost([&] { ++calls; }, o, 0.0, clock);
  // Warm-up once, then samples of exactly one tick each (two Now() calls).
  EXPECT_EQ(calls, static_cast<int>(m.sample_s.size()) + 1);
  for (double s : m.sample_s) EXPECT_NEAR(s, 0.05, 1e-12);
  EXPECT_EQ(m.reason, StopReason::kNoiseTarget);
  EXPECT_EQ(m.sample_s.size(), 10u);
}

TEST(MeasureHost, InjectedSlowdownAddsWorkInProportion) {
  FakeClock clock;
  clock.set_tick(1e-7);
  auto body = [&] { clock.Advance(0.004); };  // the case takes 4 ms
  EngineOptions o = Defaults();
  Measurement base = MeasureHost(body, o, 0.0, clock);
  Measurement slow = MeasureHost(body, o, 0.25, clock);
  ASSERT_FALSE(base.sample_s.empty());
  ASSERT_FALSE(slow.sample_s.empty());
  EXPECT_NEAR(base.sample_s.front(), 0.004, 1e-6);
  // 25 % more, spent in real busy work measured on the same clock.
  EXPECT_NEAR(slow.sample_s.front(), 0.005, 1e-5);
}

TEST(IsThrottled, AnyListedReasonMarksTheSample) {
  const ThrottleReading quiet{true, 1980, 0};
  for (uint64_t bit : {0x4ULL, 0x8ULL, 0x20ULL, 0x40ULL, 0x80ULL}) {
    EXPECT_TRUE(IsThrottled(quiet, ThrottleReading{true, 1980, bit}, 1980)) << bit;
    EXPECT_TRUE(IsThrottled(ThrottleReading{true, 1980, bit}, quiet, 1980)) << bit;
  }
  // GPU idle (0x1) and applications-clocks setting (0x2) are not throttling.
  EXPECT_FALSE(IsThrottled(quiet, ThrottleReading{true, 1980, 0x1 | 0x2}, 1980));
}

TEST(IsThrottled, AClockBelowThreeQuartersOfDefaultMarksTheSample) {
  EXPECT_TRUE(IsThrottled({true, 1980, 0}, {true, 1484, 0}, 1980));   // 0.7495
  EXPECT_FALSE(IsThrottled({true, 1980, 0}, {true, 1485, 0}, 1980));  // 0.75
  // Nothing read (no NVML) says nothing.
  EXPECT_FALSE(IsThrottled({false, 100, 0xff}, {false, 100, 0xff}, 1980));
}

// Replays scripted readings: each sample reads twice (before and after).
class ScriptedThrottle final : public ThrottleSource {
 public:
  explicit ScriptedThrottle(std::vector<ThrottleReading> r) : readings_(std::move(r)) {}
  ThrottleReading Read() override {
    return next_ < readings_.size() ? readings_[next_++] : ThrottleReading{true, 1980, 0};
  }
  double DefaultSmClockMhz() const override { return 1980; }

 private:
  std::vector<ThrottleReading> readings_;
  size_t next_ = 0;
};

TEST(MeasureSamples, MarksThrottledSamplesKeepsThemAndLeavesThemOutOfTheNoise) {
  FakeClock clock;
  const ThrottleReading ok{true, 1980, 0}, capped{true, 1900, 0x4};
  // Sample 0 quiet, sample 1 power-capped after, sample 2 quiet, then quiet.
  ScriptedThrottle throttle({ok, ok, ok, capped, ok, ok});
  int n = 0;
  EngineOptions o = Defaults();
  o.warmup_runs = 0;
  Measurement m = MeasureSamples([] {}, [&] {
    clock.Advance(0.1);
    // The throttled sample is 3x slower: were it counted the noise would show it.
    return ++n == 2 ? 0.3 : 0.1;
  }, o, clock, &throttle);
  ASSERT_GE(m.sample_s.size(), 11u);
  EXPECT_FALSE(m.throttled[0]);
  EXPECT_TRUE(m.throttled[1]);
  EXPECT_FALSE(m.throttled[2]);
  EXPECT_EQ(m.throttled_count, 1u);
  EXPECT_DOUBLE_EQ(m.sample_s[1], 0.3);
  EXPECT_LT(m.noise, 1e-6);  // with the 0.3 s sample it would be about 0.6
  // Ten unthrottled samples were needed, so eleven were taken.
  EXPECT_EQ(m.sample_s.size(), 11u);
}

TEST(MeasureSamples, BacksOffAfterThreeThrottledSamplesInARow) {
  FakeClock clock;
  const ThrottleReading hot{true, 1200, 0x20};
  ScriptedThrottle throttle(std::vector<ThrottleReading>(6, hot));
  EngineOptions o = Defaults();
  o.warmup_runs = 0;
  Measurement m = MeasureSamples([] {}, [&] {
    clock.Advance(0.1);
    return 0.1;
  }, o, clock, &throttle, 0.25);
  EXPECT_EQ(m.throttled_count, 3u);
  EXPECT_DOUBLE_EQ(clock.slept(), 0.25);
}

TEST(MeasureSamples, ReportsTheWallTimeOfTheSamplesAloneWithoutWarmUpOrBackOff) {
  FakeClock clock;
  const ThrottleReading hot{true, 1200, 0x20};
  ScriptedThrottle throttle(std::vector<ThrottleReading>(6, hot));  // three throttled samples
  EngineOptions o = Defaults();
  o.sample_count = 10;
  o.warmup_runs = 1;
  const Measurement m = MeasureSamples([&] { clock.Advance(2.0); },  // a long set-up
                                       [&] {
                                         clock.Advance(0.01);
                                         return 0.01;
                                       },
                                       o, clock, &throttle, 0.25);
  EXPECT_EQ(clock.slept(), 0.25);
  ASSERT_EQ(m.sample_s.size(), 10u);
  EXPECT_NEAR(m.sampling_s, 0.1, 1e-9);  // not 2.35 with the warm-up and the back-off
}

// A device drawing `watts` whenever the clock runs, with an energy counter
// (or without one: `missing` is then the reason it gives).
class MeteredDevice final : public ThrottleSource {
 public:
  MeteredDevice(FakeClock& clock, double watts, std::string missing = "")
      : clock_(clock), watts_(watts), missing_(std::move(missing)) {}
  ThrottleReading Read() override { return {true, 1980, 0}; }
  double DefaultSmClockMhz() const override { return 1980; }
  absl::StatusOr<double> EnergyJoules() override {
    if (!missing_.empty()) return absl::UnavailableError(missing_);
    return 1000 + watts_ * clock_.Now();  // the counter started before the case
  }

 private:
  FakeClock& clock_;
  double watts_;
  std::string missing_;
};

TEST(MeasureSamples, ReadsTheEnergyCounterAroundTheTimedSamplesAndNotTheWarmUp) {
  FakeClock clock;
  MeteredDevice device(clock, 700);
  EngineOptions o = Defaults();
  o.sample_count = 10;
  const Measurement m = MeasureSamples([&] { clock.Advance(3.0); },  // a long warm-up
                                       [&] {
                                         clock.Advance(0.05);
                                         return 0.05;
                                       },
                                       o, clock, &device);
  ASSERT_TRUE(m.energy_j.has_value()) << m.energy_unavailable;
  EXPECT_NEAR(*m.energy_j, 700 * 0.5, 1e-6);  // ten samples of 50 ms, not the 3 s warm-up
  EXPECT_NEAR(m.energy_window_s, 0.5, 1e-9);
  EXPECT_EQ(m.energy_unavailable, "");
}

// Ten samples of `sample_s` each on `device`, without warm-up work.
Measurement TenSamples(FakeClock& clock, ThrottleSource& device, double sample_s) {
  EngineOptions o = Defaults();
  o.sample_count = 10;
  return MeasureSamples([] {}, [&] {
    clock.Advance(sample_s);
    return sample_s;
  }, o, clock, &device);
}

TEST(MeasureSamples, ADeviceWithoutAnEnergyCounterGivesItsReasonAndNoEnergy) {
  FakeClock clock;
  MeteredDevice device(clock, 700, "nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML 3)");
  const Measurement m = TenSamples(clock, device, 0.05);
  EXPECT_FALSE(m.energy_j.has_value());
  EXPECT_EQ(m.energy_unavailable, "nvmlDeviceGetTotalEnergyConsumption: Not Supported (NVML 3)");
}

TEST(MeasureSamples, ACounterThatDidNotAdvanceIsUnavailableRatherThanZero) {
  FakeClock clock;
  MeteredDevice idle(clock, 0);  // a counter updated less often than the samples last
  const Measurement m = TenSamples(clock, idle, 0.001);
  EXPECT_FALSE(m.energy_j.has_value());
  EXPECT_NE(m.energy_unavailable.find("did not advance"), std::string::npos) << m.energy_unavailable;
}

TEST(MeasureSamples, OnTheHostReadsNoEnergyAndGivesNoReason) {
  FakeClock clock;
  EngineOptions o = Defaults();
  o.sample_count = 10;
  const Measurement m = MeasureHost([&] { clock.Advance(0.01); }, o, 0, clock);
  EXPECT_FALSE(m.energy_j.has_value());
  EXPECT_EQ(m.energy_unavailable, "");
}

TEST(MeasureOnce, TimesTheWorkOnceAndReadsTheEnergyItDrewAroundIt) {
  FakeClock clock;
  MeteredDevice device(clock, 400);
  const Measurement m = MeasureOnce([&] { clock.Advance(2.5); }, clock, &device);
  ASSERT_EQ(m.sample_s.size(), 1u);
  EXPECT_DOUBLE_EQ(m.sample_s[0], 2.5);
  ASSERT_EQ(m.throttled.size(), 1u);
  EXPECT_FALSE(m.throttled[0]);
  ASSERT_TRUE(m.energy_j.has_value()) << m.energy_unavailable;
  EXPECT_NEAR(*m.energy_j, 400 * 2.5, 1e-6);
  EXPECT_NEAR(m.energy_window_s, 2.5, 1e-9);
}

TEST(MeasureOnce, MarksTheSampleThrottledWhenTheClockDroppedMeanwhile) {
  FakeClock clock;
  ScriptedThrottle capped({{true, 1980, 0}, {true, 1400, 0x4}});
  const Measurement m = MeasureOnce([&] { clock.Advance(1.0); }, clock, &capped);
  ASSERT_EQ(m.throttled.size(), 1u);
  EXPECT_TRUE(m.throttled[0]);
  EXPECT_EQ(m.throttled_count, 1u);
  EXPECT_FALSE(m.energy_j.has_value());  // this source has no counter, and says so
  EXPECT_NE(m.energy_unavailable, "");
}

TEST(MeasureOnce, OnTheHostReadsNothingButTheTime) {
  FakeClock clock;
  const Measurement m = MeasureOnce([&] { clock.Advance(0.25); }, clock, nullptr);
  EXPECT_DOUBLE_EQ(m.sample_s.at(0), 0.25);
  EXPECT_FALSE(m.energy_j.has_value());
  EXPECT_EQ(m.energy_unavailable, "");
}

}  // namespace
}  // namespace perfgate
