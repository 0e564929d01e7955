// The bisection states' and probe verdicts' names: each parses back to its
// value, and the names are the database's and the HTTP API's.
#include "common/bisection_state.h"

#include <gtest/gtest.h>

#include <utility>

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

TEST(ProbeVerdict, EachNameParsesBackAndIsTheStoredOne) {
  const std::pair<ProbeVerdict, const char*> named[] = {{ProbeVerdict::kCarries, "carries"},
                                                        {ProbeVerdict::kClean, "clean"},
                                                        {ProbeVerdict::kUndecided, "undecided"},
                                                        {ProbeVerdict::kFailed, "failed"}};
  for (const auto& [verdict, name] : named) {
    EXPECT_EQ(ToString(verdict), name);
    EXPECT_EQ(ParseProbeVerdict(name), verdict) << name;
  }
  EXPECT_EQ(ParseProbeVerdict("Clean"), std::nullopt);
  EXPECT_EQ(ParseProbeVerdict(""), std::nullopt);
}

}  // namespace
}  // namespace perfgate
