#include "suites/registry.h"

#include <gtest/gtest.h>

#include "suites/builtin.h"
#include "tests/support/fake_clock.h"

namespace perfgate::suites {
namespace {

Registry TwoCases() {
  Registry r;
  r.Add({.suite = "demo",
         .name = "grid",
         .axes = {{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}},
         .metrics = {MetricKind::kTime},
         .body = [](State&) {}});
  r.Add({.suite = "demo",
         .name = "shapes",
         .points = {{{"m", "64"}, {"n", "32"}}, {{"m", "128"}, {"n", "16"}}},
         .metrics = {MetricKind::kTime, MetricKind::kThroughput},
         .body = [](State&) {}});
  return r;
}

std::vector<std::string> Keys(const std::vector<CaseInstance>& cases) {
  std::vector<std::string> out;
  for (const auto& c : cases) out.push_back(c.id.Key());
  return out;
}

TEST(Registry, ExpandsAxesAndPointsIntoInstances) {
  Registry r = TwoCases();
  auto all = r.Select({}, {}, {});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Keys(*all), (std::vector<std::string>{
                            "demo/grid{a=1,b=x}", "demo/grid{a=1,b=y}", "demo/grid{a=1,b=z}",
                            "demo/grid{a=2,b=x}", "demo/grid{a=2,b=y}", "demo/grid{a=2,b=z}",
                            "demo/shapes{m=64,n=32}", "demo/shapes{m=128,n=16}"}));
}

TEST(Registry, FiltersByGlobOverKeys) {
  Registry r = TwoCases();
  auto some = r.Select({}, {"demo/grid{a=2*", "*m=128*"}, {});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(Keys(*some), (std::vector<std::string>{"demo/grid{a=2,b=x}", "demo/grid{a=2,b=y}",
                                                   "demo/grid{a=2,b=z}", "demo/shapes{m=128,n=16}"}));
}

TEST(Registry, OverridesReplaceAxisValues) {
  Registry r = TwoCases();
  auto some = r.Select({}, {"demo/grid*"}, {{"b", {"w"}}});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(Keys(*some), (std::vector<std::string>{"demo/grid{a=1,b=w}", "demo/grid{a=2,b=w}"}));
}

TEST(Registry, AnOptionStaysOutOfTheKeyAtItsDefaultAndInItWhenSet) {
  Registry r;
  r.Add({.suite = "demo",
         .name = "timed",
         .axes = {{"n", {"1"}}},
         .options = {{"clock", "wall"}},
         .metrics = {MetricKind::kTime},
         .body = [](State&) {}});
  auto plain = r.Select({}, {}, {});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(Keys(*plain), (std::vector<std::string>{"demo/timed{n=1}"}));  // the series before the option
  auto set = r.Select({}, {"*clock=cpu*"}, {{"clock", {"wall", "cpu"}}});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(Keys(*set), (std::vector<std::string>{"demo/timed{clock=cpu,n=1}"}));
  State cpu(set->front().id, {MetricKind::kTime}, EngineOptions{}, 0);
  EXPECT_EQ(cpu.ParamOr("clock", "wall"), "cpu");
  State wall(plain->front().id, {MetricKind::kTime}, EngineOptions{}, 0);
  EXPECT_EQ(wall.ParamOr("clock", "wall"), "wall");
}

TEST(Registry, RefusesUnknownSuitesAndUnusedOverrides) {
  Registry r = TwoCases();
  EXPECT_NE(r.Select({"nope"}, {}, {}).status().message().find("unknown suite 'nope'"), std::string::npos);
  EXPECT_NE(r.Select({}, {}, {{"zzz", {"1"}}}).status().message().find("'zzz'"), std::string::npos);
  EXPECT_FALSE(r.Select({}, {}, {{"m", {"1", "2"}}}).ok());  // a shape takes one value
}

TEST(Registry, AFilterWithoutASlashMatchesWithinTheSuite) {
  Registry r = TwoCases();
  auto some = r.Select({}, {"shapes*"}, {});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(Keys(*some), (std::vector<std::string>{"demo/shapes{m=64,n=32}", "demo/shapes{m=128,n=16}"}));
  auto none = r.Select({}, {"other/shapes*"}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(Registry, OverridingAShapeCollapsesPointsThatBecomeEqual) {
  Registry r = TwoCases();
  auto some = r.Select({}, {"demo/shapes*"}, {{"m", {"8"}}, {"n", {"4"}}});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(Keys(*some), (std::vector<std::string>{"demo/shapes{m=8,n=4}"}));
}

TEST(Registry, MetricsMayDependOnThePoint) {
  Registry r;
  r.Add({.suite = "s",
         .name = "roof",
         .axes = {{"what", {"mem", "math"}}},
         .body = [](State&) {},
         .metrics_for = [](const BenchmarkId& id) {
           return std::vector<MetricKind>{id.params.at("what") == "mem" ? MetricKind::kBandwidth
                                                                       : MetricKind::kTflops};
         }});
  auto all = r.Select({}, {}, {});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].metrics, std::vector<MetricKind>{MetricKind::kBandwidth});
  EXPECT_EQ((*all)[1].metrics, std::vector<MetricKind>{MetricKind::kTflops});
}

// A case that times on a clock of its own (sgemm's clock=cpu) gets samples
// of that clock: each iteration here advances it by exactly 2 ms, and no
// wall time of the (empty) iteration is in them.
TEST(State, MeasureHostTimesOnTheClockItIsGiven) {
  EngineOptions three;
  three.warmup_runs = 0;
  three.sample_count = 3;
  State s(BenchmarkId{"s", "n", {}}, {MetricKind::kTime}, three, 0);
  testing::FakeClock clock;
  s.MeasureHost([&] { clock.Advance(0.002); }, clock);
  CaseResult r = s.TakeResult();
  ASSERT_EQ(r.samples.size(), 3u) << r.reason;
  for (const Sample& sample : r.samples) EXPECT_DOUBLE_EQ(sample.values[0], 2.0);  // ms
}

TEST(State, RoofFractionDividesTheBandwidthByTheRoof) {
  State s(BenchmarkId{"s", "n", {}}, {MetricKind::kBandwidth, MetricKind::kRoofFraction}, EngineOptions{}, 0);
  s.SetBytesPerIteration(3e9);
  s.SetRoof(2000);
  Measurement m;
  m.sample_s = {0.002, 0.003};
  m.throttled = {false, false};
  m.reason = StopReason::kNoiseTarget;
  s.Record(m);
  CaseResult r = s.TakeResult();
  ASSERT_EQ(r.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(r.samples[0].values[0], 1500);  // 3 GB in 2 ms
  EXPECT_DOUBLE_EQ(r.samples[0].values[1], 0.75);
  EXPECT_DOUBLE_EQ(r.samples[1].values[1], 0.5);
  EXPECT_EQ(r.metrics[1].name, "roof_fraction");
  EXPECT_EQ(r.metrics[1].unit, "ratio");
  EXPECT_EQ(r.metrics[1].direction, Direction::kHigherIsBetter);
}

TEST(State, ReportsTheSamplingTimeOfAllItsMeasurementsAsTheSamplesSeconds) {
  State s(BenchmarkId{"s", "n", {}}, {MetricKind::kTime}, EngineOptions{}, 0);
  Measurement m;
  m.sample_s = {0.002, 0.003};
  m.throttled = {false, false};
  m.reason = StopReason::kSampleCount;
  m.sampling_s = 0.25;
  s.Record(m);
  m.sampling_s = 0.5;
  s.Record(m);
  EXPECT_DOUBLE_EQ(s.TakeResult().sample_seconds, 0.75);
}

TEST(Registry, RegistrationTouchesNoCaseBody) {
  int ran = 0;
  Registry r;
  r.Add({.suite = "s", .name = "n", .metrics = {MetricKind::kTime}, .body = [&](State&) { ++ran; }});
  ASSERT_TRUE(r.Select({}, {}, {}).ok());
  EXPECT_EQ(ran, 0);
}

TEST(State, ACaseThatNeitherMeasuresNorSkipsFails) {
  State s(BenchmarkId{"s", "n", {}}, {MetricKind::kTime}, EngineOptions{}, 0);
  CaseResult r = s.TakeResult();
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("neither"), std::string::npos);
}

TEST(State, DerivesMetricsFromTimeAndDeclaredWork) {
  EngineOptions o;
  o.min_time_s = 0;
  State s(BenchmarkId{"s", "n", {}}, {MetricKind::kTime, MetricKind::kBandwidth, MetricKind::kThroughput}, o, 0);
  s.SetBytesPerIteration(2e9);
  s.SetFlopsPerIteration(4e9);
  s.MeasureHost([] { BusyWork(0.001, SteadyClock()); });
  CaseResult r = s.TakeResult();
  ASSERT_GE(r.samples.size(), 10u);
  for (const Sample& smp : r.samples) {
    ASSERT_EQ(smp.values.size(), 3u);
    const double seconds = smp.values[0] / 1e3;
    EXPECT_NEAR(smp.values[1], 2.0 / seconds, 1e-6 * smp.values[1]);
    EXPECT_NEAR(smp.values[2], 4.0 / seconds, 1e-6 * smp.values[2]);
  }
  EXPECT_NE(r.status, CaseStatus::kFailed);
}

TEST(BuiltinRegistry, HasTheKernelsHostCases) {
  auto all = BuiltinRegistry().Select({"kernels"}, {"copy*", "triad*", "sgemm*"}, {});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Keys(*all), (std::vector<std::string>{
                            "kernels/copy{bytes=268435456}", "kernels/triad{bytes=268435456}",
                            "kernels/sgemm{k=512,m=512,n=512,threads=1}",
                            "kernels/sgemm{k=1024,m=1024,n=1024,threads=1}",
                            "kernels/sgemm{k=2048,m=2048,n=2048,threads=1}"}));
}

}  // namespace
}  // namespace perfgate::suites
