#include "agent/runner.h"

#include <gtest/gtest.h>

namespace perfgate::agent {
namespace {

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
