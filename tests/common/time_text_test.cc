// A moment as text: seconds since the epoch or RFC 3339, anything else
// refused with the parameter's name and the text.
#include "common/time_text.h"

#include <gtest/gtest.h>

#include <chrono>

namespace perfgate {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(TimeText, SecondsSinceTheEpochWholeOrDecimal) {
  auto whole = ParseTimeText("from", "1764295200");
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(*whole, TimePoint(seconds(1764295200)));
  auto decimal = ParseTimeText("to", "1764295200.25");
  ASSERT_TRUE(decimal.ok()) << decimal.status();
  EXPECT_EQ(std::chrono::duration_cast<milliseconds>(decimal->time_since_epoch()),
            milliseconds(1764295200250));
}

TEST(TimeText, Rfc3339InUtcOrWithAnOffsetIsTheSameMoment) {
  auto utc = ParseTimeText("from", "2025-11-28T02:00:00Z");
  auto offset = ParseTimeText("from", "2025-11-28T03:00:00+01:00");
  ASSERT_TRUE(utc.ok()) << utc.status();
  ASSERT_TRUE(offset.ok()) << offset.status();
  EXPECT_EQ(*utc, TimePoint(seconds(1764295200)));
  EXPECT_EQ(*offset, *utc);
}

TEST(TimeText, AnythingElseIsRefusedNamingTheParameterAndTheText) {
  for (const char* bad : {"", "yesterday", "2025-11-28", "nan", "inf", "12abc"}) {
    auto t = ParseTimeText("to", bad);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(t.status().message().find(std::string("to: '") + bad + "' is not a time"), std::string::npos)
        << t.status().message();
  }
}

}  // namespace
}  // namespace perfgate
