// What a binary prints when CLI11 refuses its command line: a word where a
// command belongs is named with the commands there are, at any depth.
#include "common/parse_errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace perfgate {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

// An app shaped like perfgate-coordinator's: two commands, one of which
// needs a command of its own.
Outcome Parse(std::vector<std::string> args) {
  CLI::App app{"tool"};
  app.require_subcommand(1);
  std::string database;
  app.add_option("--database", database);
  app.add_subcommand("serve", "Serve");
  CLI::App* creds = app.add_subcommand("credentials", "Credentials");
  creds->require_subcommand(1);
  creds->add_subcommand("issue", "Issue");
  creds->add_subcommand("list", "List");
  std::vector<const char*> argv = {"tool"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  Outcome o;
  std::ostringstream out, err;
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    o.exit_code = ReportParseError(app, e, "tool", out, err);
  }
  o.out = out.str();
  o.err = err.str();
  return o;
}

TEST(ParseErrors, AWordWhereACommandBelongsIsNamedWithTheCommands) {
  const Outcome o = Parse({"--database", "db", "serv"});
  EXPECT_EQ(o.exit_code, kExitError);
  EXPECT_EQ(o.err, "tool: unknown command 'serv'\nCommands: serve credentials\n"
                   "Run 'tool --help' for what each does.\n");
}

TEST(ParseErrors, AWordWhereACommandsCommandBelongsNamesThatLevel) {
  const Outcome o = Parse({"credentials", "issu"});
  EXPECT_EQ(o.exit_code, kExitError);
  EXPECT_EQ(o.err, "tool: unknown command 'issu'\nCommands: issue list\n"
                   "Run 'tool credentials --help' for what each does.\n");
}

TEST(ParseErrors, OtherRefusalsAreCli11sOwn) {
  const Outcome o = Parse({"serve", "--bogus"});
  EXPECT_EQ(o.exit_code, kExitError);
  EXPECT_THAT(o.err, Not(HasSubstr("unknown command")));
  EXPECT_THAT(o.err, HasSubstr("--bogus"));
}

TEST(ParseErrors, HelpExitsZeroOnStdout) {
  const Outcome o = Parse({"--help"});
  EXPECT_EQ(o.exit_code, kExitPass);
  EXPECT_THAT(o.out, HasSubstr("credentials"));
}

}  // namespace
}  // namespace perfgate
