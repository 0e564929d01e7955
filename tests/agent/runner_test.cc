#include "agent/runner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/fake_clock.h"

namespace perfgate::agent {
namespace {

using testing::FakeClock;

TEST(ParseDuration, AcceptsSecondsMinutesHoursAndBareNumbers) {
  EXPECT_EQ(*ParseDuration("90"), 90);
  EXPECT_EQ(*ParseDuration("60s"), 60);
  EXPECT_EQ(*ParseDuration("2m"), 120);
  EXPECT_EQ(*ParseDuration("1.5h"), 5400);
}

TEST(ParseDuration, RefusesNonsenseAndNonPositiveValues) {
  for (const char* bad : {"", "s", "abc", "10x", "-5s", "0", "1ms"}) {
    auto d = ParseDuration(bad);
    EXPECT_FALSE(d.ok()) << bad;
    EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(BudgetedTimeout, SharesTheBudgetLeftAmongTheCasesLeft) {
  EXPECT_EQ(BudgetedTimeout(15, 0, 0, 4), 15);    // no budget: the case's own
  EXPECT_EQ(BudgetedTimeout(15, 60, 0, 8), 7.5);  // 60 s over 8 cases
  EXPECT_EQ(BudgetedTimeout(15, 60, 40, 2), 10);  // 20 s left over 2
  EXPECT_EQ(BudgetedTimeout(5, 60, 0, 2), 5);     // never above the case's own
  EXPECT_EQ(BudgetedTimeout(15, 60, 70, 1), 0);   // overspent: nothing left
}

suites::CaseSpec Timed(const std::string& name, FakeClock& clock, std::vector<double>* timeouts) {
  return {.suite = "s",
          .name = name,
          .metrics = {suites::MetricKind::kTime},
          .body = [&clock, timeouts](suites::State& state) {
            timeouts->push_back(state.options().timeout_s);
            clock.Advance(25);  // each case takes 25 s of the run
            Measurement m;
            m.sample_s = {0.001};
            m.throttled = {false};
            m.reason = StopReason::kNoiseTarget;
            state.Record(m);
          }};
}

TEST(RunCases, BoundsEachCaseByTheBudgetAndSkipsWhatItCannotStart) {
  FakeClock clock(1000);
  std::vector<double> timeouts;
  suites::Registry registry;
  for (const char* n : {"a", "b", "c", "d"}) registry.Add(Timed(n, clock, &timeouts));
  auto cases = registry.Select({}, {}, {});
  ASSERT_TRUE(cases.ok());
  RunnerOptions options;
  options.engine.timeout_s = 15;
  options.time_budget_s = 60;
  std::vector<CaseResult> results;
  ASSERT_TRUE(RunCases(*cases, options, [&](CaseResult r) {
                results.push_back(std::move(r));
                return absl::OkStatus();
              }, clock).ok());
  // a: min(15, 60/4); b: min(15, 35/3); c: min(15, 10/2); d: not started at 75 s.
  ASSERT_EQ(timeouts.size(), 3u);
  EXPECT_EQ(timeouts[0], 15);
  EXPECT_DOUBLE_EQ(timeouts[1], 35.0 / 3);
  EXPECT_EQ(timeouts[2], 5);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[2].status, CaseStatus::kOk);
  EXPECT_EQ(results[3].status, CaseStatus::kSkipped);
  EXPECT_NE(results[3].reason.find("time budget of 60 s"), std::string::npos) << results[3].reason;
  EXPECT_EQ(results[3].benchmark.name, "d");
  EXPECT_EQ(results[3].metrics.size(), 1u);
}

TEST(RunCases, WithoutABudgetKeepsEveryCasesOwnTimeout) {
  FakeClock clock(1000);
  std::vector<double> timeouts;
  suites::Registry registry;
  for (const char* n : {"a", "b", "c"}) registry.Add(Timed(n, clock, &timeouts));
  auto cases = registry.Select({}, {}, {});
  ASSERT_TRUE(cases.ok());
  RunnerOptions options;
  options.engine.timeout_s = 15;
  int ok = 0;
  ASSERT_TRUE(RunCases(*cases, options, [&](CaseResult r) {
                ok += r.status == CaseStatus::kOk;
                return absl::OkStatus();
              }, clock).ok());
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(timeouts, (std::vector<double>{15, 15, 15}));
}

// A case whose loop goes over `units` elements, reporting how many it went over.
suites::CaseSpec Loop(const std::string& name, size_t units, bool scales, size_t* looped) {
  return {.suite = "s",
          .name = name,
          .metrics = {suites::MetricKind::kTime},
          .body = [units, scales, looped](suites::State& state) {
            *looped = scales ? state.AddWork(units, "elements") : units;
            Measurement m;
            m.sample_s = {0.001};
            m.throttled = {false};
            m.reason = StopReason::kNoiseTarget;
            state.Record(m);
          }};
}

TEST(InjectWork, ACaseThatScalesItsLoopRunsExactlyThatMuchMoreAndSaysSo) {
  size_t looped = 0;
  suites::Registry registry;
  registry.Add(Loop("triad", 33554432, true, &looped));
  auto cases = registry.Select({}, {}, {});
  ASSERT_TRUE(cases.ok());
  RunnerOptions options;
  options.added_work = {*ParseInjection("--inject-work", "s/tri*=1")};
  CaseResult r = RunCase(cases->front(), options);
  EXPECT_EQ(r.status, CaseStatus::kOk) << r.reason;
  EXPECT_EQ(looped, 33554432u + 335544u);  // round(1 % of the loop)
  EXPECT_NE(r.reason.find("injected work +1 % (335544 more elements than its 33554432)"), std::string::npos)
      << r.reason;
  // Not matched: the loop is the case's own.
  options.added_work = {*ParseInjection("--inject-work", "s/copy*=1")};
  r = RunCase(cases->front(), options);
  EXPECT_EQ(looped, 33554432u);
  EXPECT_EQ(r.reason.find("injected work"), std::string::npos) << r.reason;
}

TEST(InjectWork, ACaseThatCannotScaleItsWorkFailsNamingTheAlternative) {
  size_t looped = 0;
  suites::Registry registry;
  registry.Add(Loop("sgemm", 1024, false, &looped));
  auto cases = registry.Select({}, {}, {});
  ASSERT_TRUE(cases.ok());
  RunnerOptions options;
  options.added_work = {*ParseInjection("--inject-work", "s/*=5")};
  const CaseResult r = RunCase(cases->front(), options);
  EXPECT_EQ(r.status, CaseStatus::kFailed);
  EXPECT_NE(r.reason.find("--inject-work: s/sgemm cannot add to its own work"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("--inject-slowdown"), std::string::npos) << r.reason;
  const auto bad = ParseInjection("--inject-work", "s/*=0");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--inject-work 's/*=0'"), std::string::npos) << bad.status();
}

TEST(FormatCaseList, SaysWhetherEachCaseRunsHereAndListsItsMetrics) {
  suites::Registry registry;
  registry.Add({.suite = "k",
                .name = "gpu",
                .axes = {{"dtype", {"bf16", "fp8"}}},
                .metrics = {suites::MetricKind::kTime, suites::MetricKind::kTflops},
                .body = [](suites::State&) {},
                .unavailable = [](const BenchmarkId& id) -> std::string {
                  return id.params.at("dtype") == "fp8" ? "fp8 needs compute capability 8.9 or newer" : "";
                }});
  registry.Add({.suite = "k", .name = "host", .metrics = {suites::MetricKind::kBandwidth},
                .body = [](suites::State&) {}});
  auto cases = registry.Select({}, {}, {});
  ASSERT_TRUE(cases.ok());
  EXPECT_EQ(FormatCaseList(*cases),
            "k/gpu{dtype=bf16}  [runs here]\n"
            "    time [ms] lower_is_better\n"
            "    tflops [TFLOP/s] higher_is_better\n"
            "k/gpu{dtype=fp8}  [skips here: fp8 needs compute capability 8.9 or newer]\n"
            "    time [ms] lower_is_better\n"
            "    tflops [TFLOP/s] higher_is_better\n"
            "k/host  [runs here]\n"
            "    bandwidth [GB/s] higher_is_better\n");
}

TEST(ExpandSetValues, ListsAreKeptAsWritten) {
  auto v = ExpandSetValues("1024,4096");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<std::string>{"1024", "4096"}));
}

TEST(ExpandSetValues, RangesDoubleFromMinToMaxInclusive) {
  auto v = ExpandSetValues("8..64");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, (std::vector<std::string>{"8", "16", "32", "64"}));
}

TEST(ExpandSetValues, RangesTakeBinarySuffixesAndAFactor) {
  auto v = ExpandSetValues("1K..1M*32");
  ASSERT_TRUE(v.ok());
  // 1024, 32768, 1048576.
  EXPECT_EQ(*v, (std::vector<std::string>{"1024", "32768", "1048576"}));
  auto full = ExpandSetValues("8..1G");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->size(), 28u);  // 2^3 .. 2^30
  EXPECT_EQ(full->back(), "1073741824");
}

TEST(ExpandSetValues, MalformedRangesAreRejectedWithTheReason) {
  EXPECT_FALSE(ExpandSetValues("64..8").ok());
  EXPECT_FALSE(ExpandSetValues("8..64*1").ok());
  EXPECT_FALSE(ExpandSetValues("0..64").ok());
  auto bad = ExpandSetValues("a..b");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("MIN..MAX"), std::string_view::npos);
}

}  // namespace
}  // namespace perfgate::agent
