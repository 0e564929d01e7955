#include "common/engine.h"

#include <gtest/gtest.h>

#include <cmath>

namespace perfgate {
namespace {

// A clock that advances only when told to: the engine's loop becomes exact.
class FakeClock final : public Clock {
 public:
  double Now() override { return now_ += tick_; }
  void set_tick(double t) { tick_ = t; }
  void Advance(double seconds) { now_ += seconds; }

 private:
  double now_ = 0, tick_ = 0;
};

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

TEST(MeasureHost, TimesEachIterationWithTheClock) {
  FakeClock clock;
  clock.set_tick(0.05);  // every Now() advances 50 ms
  int calls = 0;
  EngineOptions o = Defaults();
  HostMeasurement m = MeasureHost([&] { ++calls; }, o, 0.0, clock);
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
  HostMeasurement base = MeasureHost(body, o, 0.0, clock);
  HostMeasurement slow = MeasureHost(body, o, 0.25, clock);
  ASSERT_FALSE(base.sample_s.empty());
  ASSERT_FALSE(slow.sample_s.empty());
  EXPECT_NEAR(base.sample_s.front(), 0.004, 1e-6);
  // 25 % more, spent in real busy work measured on the same clock.
  EXPECT_NEAR(slow.sample_s.front(), 0.005, 1e-5);
}

}  // namespace
}  // namespace perfgate
