// The decisions of `perfgate bisect` over scripted measurements: a probe's
// verdict, the search from the stored probes alone (so that a resumed
// bisection goes on where it stood), neighbours tried around a commit that
// stays undecided, and a range or no culprit where nothing else is honest;
// the search into a culprit merge (with the inside of a merge read from a
// real git repository) and the upgrade from one image digest to another.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "absl/strings/str_format.h"
#include "cli/bisect.h"
#include "cli/bisect_probe.h"
#include "common/command_line.h"
#include "common/file_io.h"
#include "gate/report.h"
#include "tests/support/processes.h"
#include "wire/api_json.h"
#include "wire/gate_convert.h"

namespace perfgate::cli {
namespace {

ProbeMeasurement Measured(double change, double half_width) {
  ProbeMeasurement m;
  m.ok = true;
  m.change = change;
  m.ci_low = change - half_width;
  m.ci_high = change + half_width;
  return m;
}

// Commits c01..c16 after good c00.
BisectPlan PlanOf(int commits) {
  BisectPlan plan;
  plan.good = "c00";
  for (int i = 1; i <= commits; ++i) plan.commits.push_back(absl::StrFormat("c%02d", i));
  return plan;
}

// Runs NextStep to its end, measuring each asked commit with `measure`
// (commit, attempt); the probes measured, in order, in `probes`.
BisectStep RunToEnd(const BisectPlan& plan, const std::function<ProbeMeasurement(const std::string&, unsigned)>& measure,
                    std::vector<Probe>* probes) {
  for (int guard = 0; guard < 100; ++guard) {
    const BisectStep step = NextStep(plan, *probes);
    if (step.kind != BisectStep::Kind::kMeasure) return step;
    for (size_t i = 0; i < step.commits.size(); ++i) {
      probes->push_back({step.commits[i], step.attempts[i], measure(step.commits[i], step.attempts[i])});
    }
  }
  ADD_FAILURE() << "the bisection did not end";
  return {};
}

// Commits from `first` on are 15 % slower; every measurement +-3 %.
std::function<ProbeMeasurement(const std::string&, unsigned)> StepAt(const std::string& first) {
  return [first](const std::string& commit, unsigned) {
    return Measured(commit >= first ? 0.15 : 0.0, 0.03);
  };
}

TEST(BisectJudge, CarriesWhenTheIntervalIsAboveTheThresholdCleanWhenItIsBelowIt) {
  EXPECT_EQ(Judge(Measured(0.15, 0.03), 0.075), ProbeVerdict::kCarries);
  EXPECT_EQ(Judge(Measured(0.0, 0.03), 0.075), ProbeVerdict::kClean);
  // Significant but under half the regression: neither, more rounds.
  EXPECT_EQ(Judge(Measured(0.05, 0.03), 0.075), ProbeVerdict::kUndecided);
  // Significant and above the threshold, but reaching below it: a clean
  // commit measured so on a noisy host (+7.5 % [+2.2, +13.1] against +7.2 %)
  // and was named the culprit.
  EXPECT_EQ(Judge(Measured(0.09, 0.05), 0.075), ProbeVerdict::kUndecided);
  // Large but not significant.
  EXPECT_EQ(Judge(Measured(0.10, 0.12), 0.075), ProbeVerdict::kUndecided);
  ProbeMeasurement failed;
  failed.note = "the build failed";
  EXPECT_EQ(Judge(failed, 0.075), ProbeVerdict::kFailed);
}

TEST(BisectNextStep, MeasuresTheBadEndpointFirstAndEndsWithNoCulpritWhenItIsClean) {
  const BisectPlan plan = PlanOf(15);
  std::vector<Probe> probes;
  const BisectStep step = RunToEnd(plan, [](const std::string&, unsigned) { return Measured(0.004, 0.02); }, &probes);
  EXPECT_EQ(step.kind, BisectStep::Kind::kNoCulprit);
  EXPECT_TRUE(step.culprit.empty());
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_EQ(probes[0].commit, "c15");
  EXPECT_NE(step.summary.find("no culprit"), std::string::npos) << step.summary;
}

TEST(BisectNextStep, NamesTheFirstCommitThatCarriesWhereverItIs) {
  for (int first = 1; first <= 15; ++first) {
    const BisectPlan plan = PlanOf(15);
    std::vector<Probe> probes;
    const std::string culprit = absl::StrFormat("c%02d", first);
    const BisectStep step = RunToEnd(plan, StepAt(culprit), &probes);
    ASSERT_EQ(step.kind, BisectStep::Kind::kCulprit) << culprit << ": " << step.summary;
    EXPECT_EQ(step.culprit, culprit);
    EXPECT_NEAR(step.culprit_measurement.change, 0.15, 1e-9);
    EXPECT_NEAR(step.regression_size, 0.15, 1e-9);
    // The endpoint and a binary search: at most 1 + ceil(log2 15) probes.
    EXPECT_LE(probes.size(), 5u) << culprit;
  }
}

TEST(BisectNextStep, AsksForMoreRoundsThenTriesTheNeighboursOfACommitThatStaysUndecided) {
  const BisectPlan plan = PlanOf(15);
  std::vector<Probe> probes;
  // c07, the first middle, never decides; the step is at c12.
  const auto measure = [](const std::string& commit, unsigned) {
    if (commit == "c07") return Measured(0.07, 0.08);
    return Measured(commit >= "c12" ? 0.15 : 0.0, 0.03);
  };
  const BisectStep step = RunToEnd(plan, measure, &probes);
  ASSERT_EQ(step.kind, BisectStep::Kind::kCulprit) << step.summary;
  EXPECT_EQ(step.culprit, "c12");
  ASSERT_GE(probes.size(), 5u);
  for (unsigned a = 1; a <= plan.max_attempts; ++a) {
    EXPECT_EQ(probes[a].commit, "c07");
    EXPECT_EQ(probes[a].attempt, a);
  }
  EXPECT_EQ(probes[plan.max_attempts + 1].commit, "c08") << "the neighbour next";
}

TEST(BisectNextStep, NamesTheRangeWhenOnlyUndecidedCommitsAreLeftAndNeverGuesses) {
  const BisectPlan plan = PlanOf(15);
  std::vector<Probe> probes;
  // c09 carries, c07 is clean, and c08 between them never decides: c08 or
  // c09 may be the culprit.
  const auto measure = [](const std::string& commit, unsigned) {
    if (commit == "c08") return Measured(0.07, 0.08);
    return Measured(commit >= "c09" ? 0.15 : 0.0, 0.03);
  };
  BisectStep step = RunToEnd(plan, measure, &probes);
  ASSERT_EQ(step.kind, BisectStep::Kind::kRange) << step.summary;
  EXPECT_EQ(step.range_good, "c07");
  EXPECT_EQ(step.range_bad, "c09");
  EXPECT_TRUE(step.culprit.empty());
  // A commit that cannot be built is never guessed either.
  probes.clear();
  const auto broken = [](const std::string& commit, unsigned) {
    ProbeMeasurement m;
    m.note = "the build of " + commit + " failed";
    return commit == "c08" ? m : Measured(commit >= "c09" ? 0.15 : 0.0, 0.03);
  };
  step = RunToEnd(plan, broken, &probes);
  ASSERT_EQ(step.kind, BisectStep::Kind::kRange) << step.summary;
  EXPECT_NE(step.summary.find("the build of c08 failed"), std::string::npos) << step.summary;
}

TEST(BisectNextStep, GoesOnFromStoredProbesWithoutMeasuringThemAgain) {
  const BisectPlan plan = PlanOf(15);
  std::vector<Probe> all;
  const BisectStep end = RunToEnd(plan, StepAt("c11"), &all);
  ASSERT_EQ(end.kind, BisectStep::Kind::kCulprit);
  // Interrupted after two probes: the third step is the one the full run took.
  std::vector<Probe> stored(all.begin(), all.begin() + 2);
  const BisectStep next = NextStep(plan, stored);
  ASSERT_EQ(next.kind, BisectStep::Kind::kMeasure);
  EXPECT_EQ(next.commits.front(), all[2].commit);
  std::vector<Probe> resumed = stored;
  const BisectStep again = RunToEnd(plan, StepAt("c11"), &resumed);
  EXPECT_EQ(again.culprit, "c11");
  EXPECT_EQ(resumed.size(), all.size());
}

TEST(BisectNextStep, ProbesSeveralCommitsARoundWhenAsked) {
  BisectPlan plan = PlanOf(15);
  plan.probes_per_round = 3;
  std::vector<Probe> probes = {{"c15", 1, Measured(0.15, 0.03)}};
  const BisectStep step = NextStep(plan, probes);
  ASSERT_EQ(step.kind, BisectStep::Kind::kMeasure);
  EXPECT_EQ(step.commits, (std::vector<std::string>{"c04", "c07", "c11"}));
  std::vector<Probe> all = probes;
  const BisectStep end = RunToEnd(plan, StepAt("c06"), &all);
  EXPECT_EQ(end.culprit, "c06");
}

// First-parent c01..c06 after c00, where c04 is a merge that brought in
// f1, f2, f3; the change comes from `first` (a commit inside, or c04).
BisectPlan MergePlan() {
  BisectPlan plan = PlanOf(6);
  plan.merge_insides["c04"] = {"f1", "f2", "f3"};
  return plan;
}

std::function<ProbeMeasurement(const std::string&, unsigned)> InsideAt(const std::string& first) {
  return [first](const std::string& commit, unsigned) {
    const bool carries = commit[0] == 'c' ? commit >= "c04" : first[0] == 'f' && commit >= first;
    return Measured(carries ? 0.15 : 0.0, 0.03);
  };
}

TEST(BisectIntoMerges, NamesTheCommitInsideTheMergeThatCarries) {
  std::vector<Probe> probes;
  const BisectStep end = RunToEnd(MergePlan(), InsideAt("f2"), &probes);
  ASSERT_EQ(end.kind, BisectStep::Kind::kCulprit) << end.summary;
  EXPECT_EQ(end.culprit, "f2");
  EXPECT_EQ(end.merge, "c04");
  EXPECT_NE(end.summary.find("inside merge c04"), std::string::npos) << end.summary;
  // Without the merge's inside the same probes name the merge.
  const BisectStep flat = NextStep(PlanOf(6), probes);
  EXPECT_EQ(flat.culprit, "c04");
  EXPECT_TRUE(flat.merge.empty());
}

TEST(BisectIntoMerges, NamesTheMergeItselfWhenNothingItBroughtInCarries) {
  std::vector<Probe> probes;
  const BisectStep end = RunToEnd(MergePlan(), InsideAt("c04"), &probes);
  ASSERT_EQ(end.kind, BisectStep::Kind::kCulprit) << end.summary;
  EXPECT_EQ(end.culprit, "c04");
  EXPECT_EQ(end.merge, "c04");
  EXPECT_NE(end.summary.find("none of the commits it brought in"), std::string::npos) << end.summary;
  // f3, the last commit brought in, was measured clean.
  bool f3 = false;
  for (const Probe& p : probes) f3 = f3 || p.commit == "f3";
  EXPECT_TRUE(f3);
}

TEST(BisectIntoMerges, GoesOnFromStoredProbesAndNamesARangeWhenInsideIsUndecided) {
  const BisectPlan plan = MergePlan();
  std::vector<Probe> all;
  RunToEnd(plan, InsideAt("f3"), &all);
  std::vector<Probe> resumed(all.begin(), all.end() - 1);
  const BisectStep again = RunToEnd(plan, InsideAt("f3"), &resumed);
  EXPECT_EQ(again.culprit, "f3");
  EXPECT_EQ(resumed.size(), all.size());
  // f2 never tells: the range is f1..f3 inside the merge.
  std::vector<Probe> probes;
  const BisectStep range = RunToEnd(plan, [](const std::string& commit, unsigned attempt) {
    if (commit == "f2") return Measured(0.06, 0.08);
    return InsideAt("f2")(commit, attempt);
  }, &probes);
  ASSERT_EQ(range.kind, BisectStep::Kind::kRange) << range.summary;
  EXPECT_EQ(range.range_good, "f1");
  EXPECT_EQ(range.range_bad, "f3");
  EXPECT_EQ(range.merge, "c04");
}

// `git -C repo ARGS` as a developer would run it: its output's first 40
// characters (a commit id where one is asked for).
std::string Git(const std::string& repo, std::vector<std::string> args, std::string* output = nullptr) {
  std::vector<std::string> argv = {"git", "-C", repo, "-c", "user.name=dev", "-c", "user.email=dev@example.com"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = testing::RunCommand(argv);
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->output : r.status().ToString());
  if (output != nullptr) *output = r.ok() ? r->output : "";
  return r.ok() ? r->output.substr(0, 40) : std::string();
}

// A real repository: c1, then branch f (f1, f2), c2 on main, merge M, c3.
TEST(BisectIntoMerges, ReadsTheCommitsAMergeBroughtInFromGit) {
  auto dir = testing::TempDir::Create("perfgate-bisect-merge-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string repo = dir->path();
  const auto git = [&](std::vector<std::string> args) { return Git(repo, std::move(args)); };
  const auto commit = [&](const std::string& m) {
    git({"commit", "-q", "--allow-empty", "-m", m});
    return git({"rev-parse", "HEAD"});
  };
  git({"init", "-q", "-b", "main"});
  const std::string c1 = commit("c1");
  git({"checkout", "-q", "-b", "f"});
  const std::string f1 = commit("f1"), f2 = commit("f2");
  git({"checkout", "-q", "main"});
  const std::string c2 = commit("c2");
  git({"merge", "-q", "--no-ff", "-m", "M", "f"});
  const std::string m = git({"rev-parse", "HEAD"});
  const std::string c3 = commit("c3");
  auto range = PlanRange(repo, c1, c3);
  ASSERT_TRUE(range.ok()) << range.status();
  EXPECT_EQ(range->commits, (std::vector<std::string>{c2, m, c3}));
  auto inside = MergeInside(repo, m);
  ASSERT_TRUE(inside.ok()) << inside.status();
  EXPECT_EQ(*inside, (std::vector<std::string>{f1, f2}));
  auto none = MergeInside(repo, c3);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(MergeInside(repo, "no-such-commit").ok());
}

// A bisection's builds and worktrees, by default, stay out of the work tree
// of the checkout: `git status` there shows nothing new.
TEST(BisectWorkDir, DefaultsToTheGitFolderAndLeavesGitStatusClean) {
  auto dir = testing::TempDir::Create("perfgate-bisect-workdir-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string repo = dir->path();
  Git(repo, {"init", "-q", "-b", "main"});
  Git(repo, {"commit", "-q", "--allow-empty", "-m", "c1"});
  const std::string c1 = Git(repo, {"rev-parse", "HEAD"});
  BisectSettings s;
  s.repo = repo;
  s.command = "{artifact}/bench";
  s.agent = "/bin/true";  // never run here
  s.build = "touch {commit}";
  EXPECT_NE(CheckSettings(s).message().find("--build: the command must name {artifact}"), std::string::npos)
      << CheckSettings(s);
  // {artifact} is the folder the build fills; {out}, its older spelling in
  // --build, still names the same folder.
  s.build = "touch {artifact}/built-{commit} {out}/older-{commit}";
  ASSERT_TRUE(CheckSettings(s).ok()) << CheckSettings(s);
  EXPECT_EQ(s.work_dir, (std::filesystem::path(repo) / ".git" / "perfgate-bisect").string());
  std::ostringstream log;
  auto build = BuildOf(s, c1, log);
  ASSERT_TRUE(build.ok()) << build.status() << log.str();
  EXPECT_TRUE(std::filesystem::exists(*build + "/built-" + c1)) << *build;
  EXPECT_TRUE(std::filesystem::exists(*build + "/older-" + c1)) << *build;
  std::string status = "unread";
  Git(repo, {"status", "--porcelain", "--untracked-files=all"}, &status);
  EXPECT_EQ(status, "");
}

// An executable file at `path`.
void WriteExecutable(const std::string& path) {
  std::ofstream(path) << "#!/bin/sh\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
}

TEST(BisectAgent, IsTheOneBesidePerfgateBeforeTheOneInPathAndAFlagWins) {
  auto dir = testing::TempDir::Create("perfgate-bisect-agent-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string self = dir->Join("perfgate"), beside = dir->Join("perfgate-agent");
  auto none = ResolveAgent("", self);
  if (!testing::FindInPath("perfgate-agent")) {
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.status().message().find("neither beside this perfgate (" + beside + ") nor in PATH"),
              std::string::npos) << none.status();
    EXPECT_NE(none.status().message().find("--agent"), std::string::npos);
  }
  WriteExecutable(beside);
  EXPECT_EQ(ResolveAgent("", self).value_or(""), beside);
  WriteExecutable(dir->Join("other-agent"));
  EXPECT_EQ(ResolveAgent(dir->Join("other-agent"), self).value_or(""), dir->Join("other-agent"));
  EXPECT_EQ(ResolveAgent(dir->Join("missing-agent"), self).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(BisectAgent, AResumedBisectionRunsTheAgentOfTheFlagInsteadOfTheStoredOne) {
  auto dir = testing::TempDir::Create("perfgate-bisect-resume-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  BisectSettings first;
  first.agent = "/old/build/perfgate-agent";
  first.command = "{artifact}/bench";
  const v1::BisectSettings stored = ToMessage(first);
  EXPECT_EQ(StoredSettings(stored, "").value_or(BisectSettings{}).agent, "/old/build/perfgate-agent");
  const std::string fresh = dir->Join("perfgate-agent");
  WriteExecutable(fresh);
  EXPECT_EQ(StoredSettings(stored, fresh).value_or(BisectSettings{}).agent, fresh);
  EXPECT_FALSE(StoredSettings(stored, dir->Join("missing")).ok());
  EXPECT_FALSE(StoredSettings(v1::BisectSettings(), "").ok()) << "settings without a command cannot measure";
}

// The settings as a stored bisection gives them back: through the API's JSON.
BisectSettings AsStored(const BisectSettings& s) {
  v1::BisectSettings m;
  EXPECT_TRUE(wire::FromApiJson(wire::ToApiJson(ToMessage(s)), &m, "settings").ok());
  return SettingsOf(m);
}

const std::string kGoodImage = "registry.example.com/stack@sha256:" + std::string(64, 'a');
const std::string kBadImage = "registry.example.com/stack@sha256:" + std::string(64, 'b');

// An `ab` report as the agent writes it: one measured case, with its rounds
// unless `rounds` is 0 (a report of an agent before reports carried them).
std::string AbReportJson(unsigned rounds) {
  gate::GateReport report;
  gate::MetricVerdict v;
  v.benchmark = "suite/case";
  v.metric = "latency";
  v.change = 0.1;
  v.change_ci_low = 0.08;
  v.change_ci_high = 0.12;
  v.p_value = 0.001;
  report.result.verdicts = {v};
  if (rounds > 0) {
    report.case_rounds = {{"suite/other", 3, gate::StopReason::kDecided},
                          {"suite/case", rounds, gate::StopReason::kBudget}};
  }
  return wire::GateReportJson(report);
}

TEST(BisectProbeReport, TakesTheRoundsOfTheJudgedCaseFromTheReport) {
  auto dir = testing::TempDir::Create("perfgate-bisect-report-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  ProbeTask task;
  task.benchmark = "suite/case";
  task.metric = "latency";
  const std::string path = dir->Join("report.json");
  ASSERT_TRUE(WriteFileAtomically(path, AbReportJson(17)).ok());
  ProbeMeasurement m = ReadProbeReport(path, task);
  EXPECT_TRUE(m.ok) << m.note;
  EXPECT_EQ(m.rounds, 17u);
  EXPECT_DOUBLE_EQ(m.change, 0.1);
  // Worst case of the report when the task names none: still its rounds.
  m = ReadProbeReport(path, ProbeTask{});
  EXPECT_EQ(m.benchmark, "suite/case");
  EXPECT_EQ(m.rounds, 17u);
  // A report without rounds per case still gives its measurement.
  ASSERT_TRUE(WriteFileAtomically(path, AbReportJson(0)).ok());
  m = ReadProbeReport(path, task);
  EXPECT_TRUE(m.ok) << m.note;
  EXPECT_EQ(m.rounds, 0u);
  // What is no report (here the JSON of an agent before the schema) is named, never half-read.
  ASSERT_TRUE(WriteFileAtomically(path, R"({"verdicts": [{"benchmark": "suite/case", "change_ci": [0.1, 0.2]}]})").ok());
  m = ReadProbeReport(path, task);
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.note.find(path), std::string::npos) << m.note;
  EXPECT_NE(m.note.find("change_ci"), std::string::npos) << m.note;
}

TEST(BisectImages, AcceptsOnlyNameAtSha256WithSixtyFourHexDigits) {
  EXPECT_TRUE(CheckImageDigest("--good-image", kGoodImage).ok());
  for (const std::string& bad : {std::string("stack:latest"), std::string("stack@sha256:abc"),
                                "stack@sha256:" + std::string(64, 'g'), "stack@sha256:" + std::string(64, 'A'),
                                "@sha256:" + std::string(64, 'a'), "-x@sha256:" + std::string(64, 'a'),
                                "st ack@sha256:" + std::string(64, 'a'), std::string()}) {
    const absl::Status s = CheckImageDigest("--bad-image", bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(s.message().find("--bad-image"), std::string::npos) << s.message();
  }
}

TEST(BisectImages, TheTemplatesNameTheImageAndNoBuildIsTaken) {
  BisectSettings s;
  s.images = true;
  s.repo = "/nonexistent";  // no git checkout is needed
  s.agent = "/bin/true";     // never run here
  s.work_dir = ::testing::TempDir() + "perfgate-bisect-images";
  s.command = "podman run --rm {image} /bench --out={out}";
  EXPECT_TRUE(CheckSettings(s).ok()) << CheckSettings(s);
  s.build = "make {out}";
  EXPECT_NE(CheckSettings(s).message().find("--build"), std::string::npos);
  s.build.clear();
  s.artifact = "/images/{commit}.tar";
  EXPECT_NE(CheckSettings(s).message().find("{image}"), std::string::npos);
  s.artifact.clear();
  s.command = "podman run --rm stack /bench";
  EXPECT_NE(CheckSettings(s).message().find("{image}"), std::string::npos);
  s.command = "podman run --rm {image} /bench";
  std::ostringstream log;
  auto build = BuildOf(s, kBadImage, log);
  ASSERT_TRUE(build.ok()) << build.status();
  EXPECT_EQ(*build, kBadImage);
  const ProbeTask task{kBadImage, 1, kGoodImage, kBadImage, 0.05, "", "", kGoodImage};
  const std::vector<std::string> argv = ProbeArgv(s, task, "policy.yaml", "report.json");
  const auto side = [&](const std::string& flag) {
    const auto it = std::find(argv.begin(), argv.end(), flag);
    return it == argv.end() || it + 1 == argv.end() ? std::string() : *(it + 1);
  };
  EXPECT_EQ(side("--baseline-cmd"), JoinCommand({"podman", "run", "--rm", kGoodImage, "/bench"}));
  EXPECT_EQ(side("--candidate-cmd"), JoinCommand({"podman", "run", "--rm", kBadImage, "/bench"}));
  EXPECT_TRUE(AsStored(s).images);
  // Counted probes: ab counts instructions alone, and a stored bisection
  // keeps the choice when it resumes.
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--count"), argv.end());
  s.count = true;
  const std::vector<std::string> counted = ProbeArgv(s, task, "policy.yaml", "report.json");
  const auto count = std::find(counted.begin(), counted.end(), "--count");
  ASSERT_NE(count, counted.end());
  ASSERT_LT(count + 2, counted.end());
  EXPECT_EQ(*(count + 1), "instructions");
  EXPECT_EQ(*(count + 2), "--count-only");
  EXPECT_TRUE(AsStored(s).count);
}

TEST(BisectImages, TheUpgradeIsTheCulpritWithItsEffectOrThereIsNone) {
  BisectPlan plan;
  plan.good = kGoodImage;
  plan.commits = {kBadImage};
  const BisectStep first = NextStep(plan, {});
  ASSERT_EQ(first.kind, BisectStep::Kind::kMeasure);
  EXPECT_EQ(first.commits, std::vector<std::string>{kBadImage});
  const BisectStep culprit = NextStep(plan, {{kBadImage, 1, Measured(0.12, 0.02)}});
  ASSERT_EQ(culprit.kind, BisectStep::Kind::kCulprit);
  EXPECT_EQ(culprit.culprit, kBadImage);
  EXPECT_DOUBLE_EQ(culprit.culprit_measurement.ci_low, 0.10);
  EXPECT_NE(culprit.summary.find("culprit registry.example.com/stack@sha256:bbbbbbbbbbbb: it measures +12.0 %"),
            std::string::npos) << culprit.summary;
  const BisectStep none = NextStep(plan, {{kBadImage, 1, Measured(0.0, 0.02)}});
  EXPECT_EQ(none.kind, BisectStep::Kind::kNoCulprit);
}

TEST(CommandLine, JoinedWordsSplitBackIntoTheSameWords) {
  const std::vector<std::string> argv = {"/builds/it's here/bench", "--out={out}", "a b", "$HOME", "\"q\"", ""};
  auto back = SplitCommand(JoinCommand(argv));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, argv);
}

}  // namespace
}  // namespace perfgate::cli
