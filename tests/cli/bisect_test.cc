// The decisions of `perfgate bisect` over scripted measurements: a probe's
// verdict, the search from the stored probes alone (so that a resumed
// bisection goes on where it stood), neighbours tried around a commit that
// stays undecided, and a range or no culprit where nothing else is honest.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "absl/strings/str_format.h"
#include "cli/bisect.h"
#include "common/command_line.h"

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

TEST(BisectJudge, CarriesWhenSignificantAndAtLeastTheThresholdCleanWhenTheIntervalIsBelowIt) {
  EXPECT_EQ(Judge(Measured(0.15, 0.03), 0.075), ProbeVerdict::kCarries);
  EXPECT_EQ(Judge(Measured(0.0, 0.03), 0.075), ProbeVerdict::kClean);
  // Significant but under half the regression: neither, more rounds.
  EXPECT_EQ(Judge(Measured(0.05, 0.03), 0.075), ProbeVerdict::kUndecided);
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

TEST(CommandLine, JoinedWordsSplitBackIntoTheSameWords) {
  const std::vector<std::string> argv = {"/builds/it's here/bench", "--out={out}", "a b", "$HOME", "\"q\"", ""};
  auto back = SplitCommand(JoinCommand(argv));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, argv);
}

}  // namespace
}  // namespace perfgate::cli
