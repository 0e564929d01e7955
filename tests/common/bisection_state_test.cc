// The bisection states' names: each parses back to its state, and the names
// are the database's and the HTTP API's.
#include "common/bisection_state.h"

#include <gtest/gtest.h>

namespace perfgate {
namespace {

TEST(BisectionState, EachNameParsesBackToItsState) {
  for (BisectionState s : {BisectionState::kRunning, BisectionState::kCulprit, BisectionState::kNoCulprit,
                           BisectionState::kRange}) {
    EXPECT_EQ(ParseBisectionState(ToString(s)), s) << ToString(s);
  }
}

TEST(BisectionState, NamesAreTheStoredOnes) {
  EXPECT_EQ(ToString(BisectionState::kRunning), "running");
  EXPECT_EQ(ToString(BisectionState::kCulprit), "culprit");
  EXPECT_EQ(ToString(BisectionState::kNoCulprit), "no_culprit");
  EXPECT_EQ(ToString(BisectionState::kRange), "range");
}

TEST(BisectionState, AnUnknownNameIsNone) {
  EXPECT_EQ(ParseBisectionState(""), std::nullopt);
  EXPECT_EQ(ParseBisectionState("Culprit"), std::nullopt);
  EXPECT_EQ(ParseBisectionState("done"), std::nullopt);
}

}  // namespace
}  // namespace perfgate
