// Doubles in JSON output: finite values as numbers, NaN and the infinities
// (which JSON cannot hold) as null, in both of nlohmann's object kinds.
#include "common/json_number.h"

#include <gtest/gtest.h>

#include <limits>

namespace perfgate {
namespace {

TEST(JsonNumber, AFiniteValueIsItsNumberAndAnythingElseIsNull) {
  EXPECT_EQ(NumberOrNull(0.125), nlohmann::json(0.125));
  EXPECT_EQ(NumberOrNull(-3.0).dump(), "-3.0");
  EXPECT_TRUE(NumberOrNull(std::numeric_limits<double>::quiet_NaN()).is_null());
  EXPECT_TRUE(NumberOrNull(std::numeric_limits<double>::infinity()).is_null());
  EXPECT_TRUE(NumberOrNull(-std::numeric_limits<double>::infinity()).is_null());
  const nlohmann::ordered_json ordered = {{"b", NumberOrNull<nlohmann::ordered_json>(2.5)},
                                          {"a", NumberOrNull<nlohmann::ordered_json>(std::nan(""))}};
  EXPECT_EQ(ordered.dump(), R"({"b":2.5,"a":null})");
}

}  // namespace
}  // namespace perfgate
