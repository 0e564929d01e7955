// `perfgate bisect` end to end, here (bisect_fixture.h): the bisection of
// a stored regression is killed with its probe after the first step and
// resumed from its stored probes, with the agent --agent names and its
// builds kept in the git folder, out of `git status`; it names the commit
// that adds 30 % work, and the regression's triage record says so. (At 15 %,
// beside a busy core, the culprit once measured +11 to +16 % against a
// threshold of +9.6 %, half the endpoint's noisy +19.2 %, and stayed
// undecided through three attempts: a range, as the rule says, but a test
// must be certain.) The same history
// without the slowdown ends with no culprit and names no commit.
#include <signal.h>

#include <algorithm>

#include "tests/e2e/bisect_fixture.h"

namespace perfgate::bisect_e2e_test {
namespace {

TEST_F(BisectEndToEnd, InterruptedBisectionOfARegressionResumesAndWritesTheCulpritIntoItsTriageRecord) {
  const std::vector<std::string> commits = MakeRepo("slow", 30);
  const std::string culprit = commits[kCulpritCommit - 1];
  const int64_t regression = StoreRegression(commits);
  ASSERT_GT(regression, 0);
  // The default work folder: in the checkout's git folder, not its work tree.
  std::vector<std::string> args = BisectArgs(dir_->Join("slow"), commits, regression);
  const auto work_dir = std::find(args.begin(), args.end(), "--work-dir");
  ASSERT_NE(work_dir, args.end());
  args.erase(work_dir, work_dir + 2);
  auto child = testing::ChildProcess::Start(args, dir_->Join("first.log"));
  ASSERT_TRUE(child.ok()) << child.status();
  // The bad endpoint measured and stored: kill the bisection and what it runs.
  ASSERT_TRUE((*child)->WaitForLine("(attempt 1): carries", std::chrono::minutes(5))) << (*child)->Output();
  kill(-(*child)->pid(), SIGKILL);
  (*child)->Wait(std::chrono::seconds(30));
  const int64_t id = BisectionId((*child)->Output());
  ASSERT_GT(id, 0) << (*child)->Output();
  const size_t stored = GetBisection(id).probes_size();
  ASSERT_GE(stored, 1u);

  // The resumed bisection runs the agent --agent names, not the stored one:
  // here a wrapper that notes each call and runs the real agent.
  const std::string wrapper = dir_->Join("agent-wrapper.sh"), calls = dir_->Join("agent-calls");
  std::ofstream(wrapper) << "#!/bin/sh\necho called >> '" << calls << "'\nexec '" << Bin("agent/perfgate-agent")
                         << "' \"$@\"\n";
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  auto resumed = RunCommand({Bin("cli/perfgate"), "--token-file", token_file_, "bisect", "--http", Http(),
                             "--resume", std::to_string(id), "--agent", wrapper},
                            {}, std::chrono::minutes(10));
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  std::cout << (*child)->Output() << resumed->output;
  EXPECT_EQ(resumed->exit_code, 0) << resumed->output;
  EXPECT_NE(resumed->output.find("resuming bisection " + std::to_string(id) + " from its " +
                                 std::to_string(stored) + " stored probe(s)"),
            std::string::npos);

  EXPECT_TRUE(std::filesystem::exists(calls)) << "the resumed bisection did not run --agent";
  auto git_status = RunCommand({"git", "-C", dir_->Join("slow"), "status", "--porcelain", "--untracked-files=all"});
  ASSERT_TRUE(git_status.ok()) << git_status.status();
  EXPECT_EQ(git_status->output, "") << "the bisection left files in the work tree";
  EXPECT_TRUE(std::filesystem::is_directory(dir_->Join("slow") + "/.git/perfgate-bisect/builds"));

  const v1::Bisection b = GetBisection(id);
  EXPECT_EQ(b.state(), v1::BISECTION_STATE_CULPRIT) << b.DebugString();
  EXPECT_EQ(b.culprit(), culprit) << b.DebugString();
  EXPECT_GT(b.change(), 0.075);
  EXPECT_GT(b.ci().low(), 0);
  // The bad endpoint was measured once: the resumed run went on from it.
  unsigned bad_probes = 0;
  for (const v1::BisectionProbe& p : b.probes()) bad_probes += p.commit() == commits.back() && p.attempt() == 1;
  EXPECT_EQ(bad_probes, 1u) << b.DebugString();
  // Each commit just before a carrying one that the search measured is clean or the good endpoint.
  for (const v1::BisectionProbe& p : b.probes()) {
    const auto at = std::find(commits.begin(), commits.end(), p.commit()) - commits.begin();
    if (p.verdict() == v1::PROBE_VERDICT_CARRIES) {
      EXPECT_GE(at, kCulpritCommit - 1) << p.DebugString();
    }
    if (p.verdict() == v1::PROBE_VERDICT_CLEAN) {
      EXPECT_LT(at, kCulpritCommit - 1) << p.DebugString();
    }
  }

  // The regression's triage record names the culprit with its change.
  const Json events = GetJson("/api/v1/regressions/" + std::to_string(regression))["events"];
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back()["note"].get<std::string>().rfind("culprit " + culprit.substr(0, 12) + " (+", 0), 0u)
      << events.dump(2);
  EXPECT_EQ(b.regression_id(), regression);

  auto status = RunCommand({Bin("cli/perfgate"), "--token-file", token_file_, "bisect", "--http", Http(),
                            "--status", std::to_string(id)});
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->exit_code, 0) << status->output;
  EXPECT_NE(status->output.find("culprit " + culprit.substr(0, 12)), std::string::npos) << status->output;
}

TEST_F(BisectEndToEnd, TheSameHistoryWithoutTheSlowdownEndsWithNoCulprit) {
  const std::vector<std::string> commits = MakeRepo("flat", 0);
  auto r = RunCommand(BisectArgs(dir_->Join("flat"), commits), {}, std::chrono::minutes(10));
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << r->output;
  EXPECT_EQ(r->exit_code, 0) << r->output;
  const int64_t id = BisectionId(r->output);
  ASSERT_GT(id, 0);
  const v1::Bisection b = GetBisection(id);
  EXPECT_EQ(b.state(), v1::BISECTION_STATE_NO_CULPRIT) << b.DebugString();
  EXPECT_EQ(b.culprit(), "");
  EXPECT_NE(b.summary().find("no culprit"), std::string::npos);
  // Each probe's rounds, as ab's JSON report gave them (0 when none were read).
  ASSERT_FALSE(b.probes().empty()) << b.DebugString();
  for (const v1::BisectionProbe& p : b.probes()) EXPECT_GT(p.rounds(), 0u) << p.DebugString();
  for (const std::string& c : commits) {
    EXPECT_EQ(r->output.find("culprit " + c.substr(0, 12)), std::string::npos) << r->output;
  }
}

// Counts instead of time: each probe runs one process a side under
// callgrind, and a commit that adds 2 % more work, which timed rounds on a
// shared machine cannot bound, is named without a second attempt anywhere.
TEST_F(BisectEndToEnd, ACommitAddingTwoPercentWorkIsNamedFromInstructionCounts) {
  const std::vector<std::string> commits = MakeRepo("counted", 2);
  std::vector<std::string> args = BisectArgs(dir_->Join("counted"), commits);
  args.insert(args.end(), {"--count", "--min-change", "1"});
  auto r = RunCommand(args, {}, std::chrono::minutes(10));
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << r->output;
  EXPECT_EQ(r->exit_code, 0) << r->output;
  const int64_t id = BisectionId(r->output);
  ASSERT_GT(id, 0) << r->output;
  const v1::Bisection b = GetBisection(id);
  EXPECT_EQ(b.state(), v1::BISECTION_STATE_CULPRIT) << b.DebugString();
  EXPECT_EQ(b.culprit(), commits[kCulpritCommit - 1]) << b.DebugString();
  EXPECT_EQ(b.metric(), "instructions") << b.DebugString();
  // 2 % more iterations of the loop: 2 % more instructions, to a tenth of that.
  EXPECT_NEAR(b.change(), 0.02, 0.002) << b.DebugString();
  for (const v1::BisectionProbe& p : b.probes()) {
    EXPECT_EQ(p.attempt(), 1u) << "a count needed a second measurement: " << p.DebugString();
    const auto at = std::find(commits.begin(), commits.end(), p.commit()) - commits.begin();
    EXPECT_EQ(p.verdict(), at >= kCulpritCommit - 1 ? v1::PROBE_VERDICT_CARRIES : v1::PROBE_VERDICT_CLEAN)
        << p.DebugString();
  }
}

}  // namespace
}  // namespace perfgate::bisect_e2e_test
