// common/periodic.h: when the task runs, and that destruction stops it.
#include "common/periodic.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>

namespace perfgate {
namespace {

TEST(Periodic, StartNowCallsTheTaskAtOnceAndAgainEachPeriod) {
  std::atomic<int> calls{0};
  std::promise<void> third;
  {
    Periodic p(std::chrono::milliseconds(1), Periodic::Start::kNow, [&] {
      if (++calls == 3) third.set_value();
    });
    ASSERT_EQ(third.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);
  }
  EXPECT_GE(calls.load(), 3);
}

TEST(Periodic, StartAfterOnePeriodDoesNotCallBeforeItAndStopsWithoutWaitingItOut) {
  std::atomic<int> calls{0};
  const auto begin = std::chrono::steady_clock::now();
  {
    Periodic p(std::chrono::hours(1), Periodic::Start::kAfterOnePeriod, [&] { ++calls; });
  }
  EXPECT_EQ(calls.load(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::minutes(1));
}

TEST(Periodic, StartNowWithALongPeriodCallsOnceBeforeStopping) {
  std::promise<void> called;
  std::atomic<int> calls{0};
  {
    Periodic p(std::chrono::hours(1), Periodic::Start::kNow, [&] {
      if (++calls == 1) called.set_value();
    });
    ASSERT_EQ(called.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);
  }
  EXPECT_EQ(calls.load(), 1);
}

}  // namespace
}  // namespace perfgate
