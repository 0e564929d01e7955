// The hardware counters' machinery (measure/perf_counters.h). This machine,
// as most CI VMs, exposes no hardware counter, so the reading is tested on
// the kernel's software task clock, through the same perf_event_open path:
// opened disabled, counting only while enabled, inherited by threads
// started later, scaled and divided per iteration.
#include "measure/perf_counters.h"

#include <linux/perf_event.h>
#include <time.h>

#include <cerrno>
#include <thread>

#include <gtest/gtest.h>

#include "common/count_metrics.h"
#include "measure/counts.h"

namespace perfgate {
namespace {

// The task clock (nanoseconds of CPU) as a counted event.
const std::vector<PerfEvent> kTaskClock = {{"task_clock", "ns/iter", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK}};

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Spins for `seconds` of this thread's CPU time; returns the time spun.
double Spin(double seconds) {
  const double start = ThreadCpuSeconds();
  volatile double acc = 1;
  while (ThreadCpuSeconds() - start < seconds) {
    for (int i = 0; i < 1000; ++i) acc = acc * 1.0000001 + 1e-9;
  }
  return ThreadCpuSeconds() - start;
}

std::unique_ptr<PerfCounters> OpenTaskClock() {
  auto counters = PerfCounters::Open(kTaskClock);
  EXPECT_TRUE(counters.ok()) << counters.status();
  return counters.ok() ? *std::move(counters) : nullptr;
}

double Read(const PerfCounters& c) {
  auto v = c.PerIteration(1);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? v->front().second : -1;
}

TEST(PerfCounters, CountOnlyWhileEnabled) {
  auto c = OpenTaskClock();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Read(*c), 0);  // opened disabled
  c->Enable();
  const double spun = Spin(0.02);
  c->Disable();
  const double counted = Read(*c);
  EXPECT_GE(counted, 0.9e9 * spun);
  Spin(0.02);
  EXPECT_EQ(Read(*c), counted);
  auto per = c->PerIteration(4);
  ASSERT_TRUE(per.ok());
  EXPECT_EQ(per->front().first.name, "task_clock");
  EXPECT_EQ(per->front().first.unit, "ns/iter");
  EXPECT_DOUBLE_EQ(per->front().second, counted / 4);
  EXPECT_FALSE(c->PerIteration(0).ok());
}

TEST(PerfCounters, CountThreadsStartedAfterOpening) {
  auto c = OpenTaskClock();
  ASSERT_NE(c, nullptr);
  c->Enable();
  double spun = 0;
  std::thread worker([&spun] { spun = Spin(0.05); });
  worker.join();  // this thread blocks meanwhile: the worker's time is the count
  c->Disable();
  EXPECT_GE(Read(*c), 0.9e9 * spun);
}

TEST(PerfCounters, FollowTheCountingRegionOnceSet) {
  auto c = OpenTaskClock();
  ASSERT_NE(c, nullptr);
  SetCountingCounters(c.get());
  StartCounting();
  const double spun = Spin(0.02);
  StopCounting();
  const double counted = Read(*c);
  EXPECT_GE(counted, 0.9e9 * spun);
  SetCountingCounters(nullptr);
  StartCounting();
  Spin(0.02);
  StopCounting();
  EXPECT_EQ(Read(*c), counted);
}

// Where the machine has a performance-monitoring unit the loop's
// instructions are counted; where not, the error says why.
TEST(PerfCounters, HardwareEventsCountOrSayWhyNot) {
  auto c = PerfCounters::Open(HardwareEvents());
  if (!c.ok()) {
    const std::string why(c.status().message());
    EXPECT_NE(why.find(kHwInstructionsMetric), std::string::npos) << why;
    EXPECT_TRUE(why.find("exposes no counter") != std::string::npos || why.find("not allowed") != std::string::npos ||
                why.find("no performance events") != std::string::npos)
        << why;
    return;
  }
  (*c)->Enable();
  volatile uint64_t x = 0;
  for (int i = 0; i < 1000000; ++i) x = x + static_cast<uint64_t>(i);
  (*c)->Disable();
  auto per = (*c)->PerIteration(1);
  ASSERT_TRUE(per.ok()) << per.status();
  ASSERT_EQ(per->size(), 3u);
  EXPECT_EQ(per->at(0).first.name, kHwInstructionsMetric);
  EXPECT_GE(per->at(0).second, 1e6);  // at least one instruction an iteration
  EXPECT_GT(per->at(1).second, 0);
}

TEST(PerfOpenError, SaysWhatWouldAllowTheCount) {
  const std::string none = DescribePerfOpenError("hw_instructions", ENOENT, 2);
  EXPECT_NE(none.find("exposes no counter for hw_instructions"), std::string::npos) << none;
  EXPECT_NE(none.find("--count instructions"), std::string::npos) << none;
  const std::string paranoid = DescribePerfOpenError("hw_cycles", EACCES, 3);
  EXPECT_NE(paranoid.find("kernel.perf_event_paranoid is 3"), std::string::npos) << paranoid;
  EXPECT_NE(paranoid.find("2 or lower"), std::string::npos) << paranoid;
  EXPECT_NE(DescribePerfOpenError("hw_cycles", EPERM, -100).find("could not be read"), std::string::npos);
  EXPECT_NE(DescribePerfOpenError("hw_cycles", ENOSYS, 2).find("no performance events"), std::string::npos);
  EXPECT_NE(DescribePerfOpenError("hw_cycles", EBUSY, 2).find("cannot open the counter of hw_cycles"),
            std::string::npos);
}

TEST(PerfCounters, HardwareMetricsAreCountsAndOnlyInstructionsAreTight) {
  for (const PerfEvent& e : HardwareEvents()) EXPECT_TRUE(IsCountMetric(e.metric)) << e.metric;
  EXPECT_FALSE(IsLooseCount(kHwInstructionsMetric));
  EXPECT_TRUE(IsLooseCount(kHwCyclesMetric));
  EXPECT_TRUE(IsLooseCount(kHwBranchMissesMetric));
}

}  // namespace
}  // namespace perfgate
