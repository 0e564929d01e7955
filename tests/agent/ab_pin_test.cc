// Both blocks of a round on the same CPUs (AbOptions::pin_cpus): the
// mechanism (the spawning thread's affinity, which a child inherits) and
// the A/B engine's use of it.
#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "agent/ab.h"
#include "agent/command_support.h"
#include "suites/builtin.h"
#include "common/process.h"
#include "tests/agent/ab_sides.h"

namespace perfgate::agent {
namespace {

// The CPUs the calling thread may run on.
std::vector<int> ThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

// A side that notes the CPUs it was measured on, block by block.
class PlacedSide final : public Side {
 public:
  PlacedSide(BenchmarkId id, std::vector<std::vector<int>>* seen) : id_(std::move(id)), seen_(seen) {}
  CaseResult Measure(const std::string&, unsigned samples) override {
    seen_->push_back(ThreadCpus());
    CaseResult r;
    r.benchmark = id_;
    r.metrics.push_back({"time", "ms", Direction::kLowerIsBetter});
    r.status = CaseStatus::kOk;
    for (unsigned i = 0; i < samples; ++i) r.samples.push_back({i, {10.0 + 0.01 * i}, false});
    return r;
  }

 private:
  BenchmarkId id_;
  std::vector<std::vector<int>>* seen_;
};

TEST(RoundCpus, AWindowThatMovesOnEachRoundAndNoPinThatWouldCoverEveryCpu) {
  const std::vector<int> allowed = {0, 1, 4, 5};
  EXPECT_EQ(RoundCpus(0, 1, allowed), (std::vector<int>{0}));
  EXPECT_EQ(RoundCpus(1, 1, allowed), (std::vector<int>{1}));
  EXPECT_EQ(RoundCpus(3, 1, allowed), (std::vector<int>{5}));
  EXPECT_EQ(RoundCpus(4, 1, allowed), (std::vector<int>{0}));
  EXPECT_EQ(RoundCpus(1, 2, allowed), (std::vector<int>{4, 5}));
  EXPECT_EQ(RoundCpus(1, 3, allowed), (std::vector<int>{0, 1, 5}));  // wraps round
  EXPECT_TRUE(RoundCpus(2, 0, allowed).empty());
  EXPECT_TRUE(RoundCpus(2, 4, allowed).empty());
  EXPECT_TRUE(RoundCpus(2, 9, allowed).empty());
  EXPECT_TRUE(RoundCpus(0, 1, {}).empty());
}

TEST(PinCountFor, AutoPinsHostCasesByWhatTheirSuiteSaysOrTheirThreadsAndLeavesTheRest) {
  AbCase host;
  host.id.suite = "inference";
  host.id.name = "decode";
  host.id.params = {{"backend", "host"}, {"threads", "2"}};
  EXPECT_EQ(PinCountFor(host, -1), 2u);
  AbCase kernel = host;
  kernel.id.params = {{"threads", "1"}, {"k", "1024"}};
  EXPECT_EQ(PinCountFor(kernel, -1), 1u);
  AbCase gpu = host;
  gpu.id.params["backend"] = "cuda";
  EXPECT_EQ(PinCountFor(gpu, -1), 0u);
  AbCase unknown = host;
  unknown.id.params = {{"bytes", "268435456"}};
  EXPECT_EQ(PinCountFor(unknown, -1), 0u);
  unknown.id.params = {{"threads", "many"}};
  EXPECT_EQ(PinCountFor(unknown, -1), 0u);
  // What the suite registers wins over a parameter.
  AbCase streaming = unknown;
  streaming.id.params = {{"bytes", "268435456"}};
  streaming.host_cpus = 1;
  EXPECT_EQ(PinCountFor(streaming, -1), 1u);
  // Said outright, it holds for every case; off is off.
  EXPECT_EQ(PinCountFor(gpu, 3), 3u);
  EXPECT_EQ(PinCountFor(host, 0), 0u);
}

TEST(RunnableCases, TheHostCopyAndTriadKeepOneCpuBusyAndTheSgemmSaysItByItsThreads) {
  auto selected = suites::BuiltinRegistry().Select({"kernels"}, {"copy*", "triad*", "sgemm*"}, {});
  ASSERT_TRUE(selected.ok()) << selected.status();
  std::ostringstream log;
  const std::vector<AbCase> cases = RunnableCases(*selected, log);
  ASSERT_GE(cases.size(), 3u) << log.str();
  for (const AbCase& c : cases) EXPECT_EQ(PinCountFor(c, -1), 1u) << c.id.Key();
}

TEST(ScopedCpuPin, AChildStartedMeanwhileRunsOnThePinnedCpuAndTheThreadGetsItsSetBack) {
  const std::vector<int> before = ThreadCpus();
  if (before.size() < 2) GTEST_SKIP() << "this machine lets the test run on one CPU: nothing to pin to";
  const int last = before.back();
  {
    const ScopedCpuPin pin({last});
    ASSERT_TRUE(pin.ok());
    EXPECT_EQ(ThreadCpus(), (std::vector<int>{last}));
    auto ran = CaptureOutput({"grep", "^Cpus_allowed_list:", "/proc/self/status"});
    ASSERT_TRUE(ran.ok()) << ran.status();
    EXPECT_NE(ran->second.find(absl::StrCat(":\t", last, "\n")), std::string::npos) << ran->second;
  }
  EXPECT_EQ(ThreadCpus(), before);
  // A CPU the kernel does not have changes nothing.
  const ScopedCpuPin refused({CPU_SETSIZE + 5});
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(ThreadCpus(), before);
}

TEST(MeasurePair, BothBlocksOfARoundRunOnOneCpuAndTheRoundsVisitEveryCpu) {
  const std::vector<int> before = ThreadCpus();
  if (before.size() < 2) GTEST_SKIP() << "this machine lets the test run on one CPU: nothing to pin to";
  AbCase c;
  c.id.suite = "test";
  c.id.name = "single";
  c.id.params["threads"] = "1";
  c.metrics.push_back({"time", "ms", Direction::kLowerIsBetter});
  std::vector<std::vector<int>> base_seen, cand_seen;
  PlacedSide base(c.id, &base_seen), cand(c.id, &cand_seen);
  AbOptions o;
  o.fixed_rounds = static_cast<unsigned>(2 * before.size());
  o.fixed_block_samples = 3;
  const CasePair p = MeasurePair(c, base, cand, o);  // auto: threads=1, one CPU a round
  ASSERT_EQ(p.rounds, o.fixed_rounds);
  ASSERT_EQ(base_seen.size(), o.fixed_rounds);
  ASSERT_EQ(cand_seen.size(), o.fixed_rounds);
  std::vector<int> visited;
  for (unsigned r = 0; r < o.fixed_rounds; ++r) {
    ASSERT_EQ(base_seen[r].size(), 1u) << "round " << r << ": " << absl::StrJoin(base_seen[r], ",");
    EXPECT_EQ(base_seen[r], cand_seen[r]) << "round " << r;
    EXPECT_EQ(base_seen[r], RoundCpus(r, 1, before)) << "round " << r;
    visited.push_back(base_seen[r].front());
  }
  std::sort(visited.begin(), visited.end());
  visited.erase(std::unique(visited.begin(), visited.end()), visited.end());
  EXPECT_EQ(visited, before);
  EXPECT_EQ(ThreadCpus(), before);

  // Off: the blocks run wherever the thread may.
  base_seen.clear();
  cand_seen.clear();
  o.pin_cpus = 0;
  MeasurePair(c, base, cand, o);
  for (const auto& cpus : base_seen) EXPECT_EQ(cpus, before);
  for (const auto& cpus : cand_seen) EXPECT_EQ(cpus, before);
}

}  // namespace
}  // namespace perfgate::agent
