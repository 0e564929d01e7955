// What the agent's commands share: a selection that matches no case is
// refused with the selection echoed and the command that lists the cases.
#include "agent/command_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "agent/config.h"

namespace perfgate::agent {
namespace {

using ::testing::HasSubstr;

TEST(SelectSomeCases, AFilterThatMatchesNothingIsEchoedWithTheListCommand) {
  AgentConfig config;
  config.filters = {"kernels/no-such-case*", "gemmx"};
  auto cases = SelectSomeCases(config);
  ASSERT_FALSE(cases.ok());
  EXPECT_EQ(cases.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(cases.status().message(), HasSubstr("no case matches --filter 'kernels/no-such-case*;gemmx'"));
  EXPECT_THAT(cases.status().message(), HasSubstr("; perfgate-agent list shows the cases there are"));
}

TEST(SelectSomeCases, TheListCommandKeepsTheSuiteGiven) {
  AgentConfig config;
  config.suites = {"kernels"};
  config.filters = {"nothing-here"};
  auto cases = SelectSomeCases(config);
  ASSERT_FALSE(cases.ok());
  EXPECT_THAT(cases.status().message(),
              HasSubstr("no case matches --suite 'kernels' --filter 'nothing-here'; perfgate-agent list --suite "
                        "'kernels' shows"));
}

TEST(SelectSomeCases, AFilterThatMatchesGivesTheCases) {
  AgentConfig config;
  config.filters = {"*"};
  auto all = SelectCases(config);
  ASSERT_TRUE(all.ok()) << all.status();
  auto some = SelectSomeCases(config);
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->size(), all->size());
  EXPECT_FALSE(some->empty());
}

}  // namespace
}  // namespace perfgate::agent
