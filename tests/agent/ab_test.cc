#include "agent/ab.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "agent/ab_evidence.h"
#include "tests/agent/ab_sides.h"
#include "tests/agent/ab_verdicts.h"

namespace perfgate::agent {
namespace {

TEST(SplitCommand, SplitsOnBlanksAndKeepsQuotedTextTogether) {
  auto argv = SplitCommand(
      R"(podman run --rm  --network host "img@sha256:ab cd" perfgate-agent --inject-slowdown 'kernels/sgemm{k=512*=5')");
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_EQ(*argv, (std::vector<std::string>{"podman", "run", "--rm", "--network", "host",
                                             "img@sha256:ab cd", "perfgate-agent",
                                             "--inject-slowdown", "kernels/sgemm{k=512*=5"}));
}

TEST(SplitCommand, TakesBackslashEscapesOutsideAndInsideDoubleQuotesButNotInsideSingle) {
  auto argv = SplitCommand(R"(a\ b "c\"d\\e\n" 'f\g' h""i '')");
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_EQ(*argv, (std::vector<std::string>{"a b", "c\"d\\e\\n", "f\\g", "hi", ""}));
}

TEST(SplitCommand, RefusesUnterminatedQuotesTrailingBackslashesAndEmptyCommands) {
  EXPECT_FALSE(SplitCommand("agent 'open").ok());
  EXPECT_FALSE(SplitCommand("agent \"open").ok());
  EXPECT_FALSE(SplitCommand("agent \\").ok());
  EXPECT_FALSE(SplitCommand("   ").ok());
}

TEST(BlockOrder, IsACoinPerRoundThatNoRhythmOfRoundsPredicts) {
  constexpr unsigned kRounds = 4000;
  // The same seed repeats the order; another seed gives another.
  unsigned same = 0, differs = 0;
  for (unsigned r = 0; r < 64; ++r) {
    same += BlockOrder(r, 7) == BlockOrder(r, 7);
    differs += BlockOrder(r, 7) != BlockOrder(r, 8);
  }
  EXPECT_EQ(same, 64u);
  EXPECT_GT(differs, 16u);
  // Each side first in about half the rounds, and in about half of the
  // rounds of each phase of a rhythm of 2 or 4 rounds (which ABBA would
  // fix: baseline first in every even round).
  for (unsigned period : {1u, 2u, 4u}) {
    for (unsigned phase = 0; phase < period; ++phase) {
      unsigned baseline_first = 0, rounds = 0;
      for (unsigned r = phase; r < kRounds; r += period, ++rounds) {
        const std::vector<AbRole> order = BlockOrder(r, 0x5eed);
        ASSERT_EQ(order.size(), 2u);
        EXPECT_NE(order[0], order[1]);
        baseline_first += order[0] == AbRole::kBaseline;
      }
      EXPECT_NEAR(static_cast<double>(baseline_first) / rounds, 0.5, 0.05) << period << " " << phase;
    }
  }
  // Drawn afresh when no seed is given.
  EXPECT_NE(OrderSeed(0), OrderSeed(0));
  EXPECT_EQ(OrderSeed(42), 42u);
}


TEST(MeasurePair, RunsTheBlocksInTheDrawnOrderAndPoolsEachSide) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  AbOptions o;
  o.fixed_rounds = 4;
  o.fixed_block_samples = 6;
  o.order_seed = 99;
  const CasePair p = MeasurePair(TimeCase("a"), base, cand, o);
  ASSERT_EQ(journal.size(), 8u);
  for (unsigned r = 0; r < 4; ++r) {
    const std::vector<AbRole> order = BlockOrder(r, 99);
    EXPECT_EQ(journal[2 * r].first, order[0]) << r;
    EXPECT_EQ(journal[2 * r + 1].first, order[1]) << r;
  }
  EXPECT_EQ(p.baseline.status, CaseStatus::kOk);
  EXPECT_EQ(p.baseline.samples.size(), 24u);
  EXPECT_EQ(p.candidate.samples.size(), 24u);
  EXPECT_EQ(p.candidate.benchmark.Key(), "test/a");
  EXPECT_EQ(p.baseline_blocks, (std::vector<unsigned>{6, 6, 6, 6}));
  EXPECT_EQ(p.rounds, 4u);
  EXPECT_EQ(p.stopped, StopReason::kRounds);
}

// A machine with a rhythm of four processes: whatever runs third of every
// four is 20 % slower (a rhythm seen on a 2-core VM, where successive
// processes' speeds correlate at a lag of four). Two identical builds must
// not differ there: in ABBA order the candidate ran every third process,
// and this gate called it a regression of 10 %.
TEST(MeasurePair, AnUnchangedBuildIsNoChangeOnAMachineWithARhythmOfFourProcesses) {
  unsigned processes = 0;
  auto machine = [&](auto&, unsigned c, unsigned i) {
    const double level = processes % 4 == 2 ? 12.0 : 10.0;
    if (i == 0) ++processes;
    return Jitter(level, c, i);
  };
  for (uint64_t seed : {1u, 2u, 3u}) {
    processes = 0;
    std::vector<std::pair<AbRole, std::string>> journal;
    ScriptedSide base(AbRole::kBaseline, machine, &journal), cand(AbRole::kCandidate, machine, &journal);
    AbOptions o;
    o.fixed_rounds = 30;
    o.fixed_block_samples = 1;
    o.order_seed = seed;
    o.confirm = false;
    std::ostringstream log;
    const AbResult r = RunAb({TimeCase("a")}, base, cand, gate::Policy{}, "cpu-test", o, log);
    ASSERT_EQ(r.gate.verdicts.size(), 1u);
    const gate::MetricVerdict& v = r.gate.verdicts[0];
    EXPECT_NE(v.verdict, gate::Verdict::kRegression) << v.note;
    EXPECT_NE(v.verdict, gate::Verdict::kImprovement) << v.note;
    EXPECT_LE(v.change_ci_low, 0.0) << v.note;
    EXPECT_GE(v.change_ci_high, 0.0) << v.note;
  }
}

TEST(MeasurePair, APilotBlockSizesTheBlocksByTimeAndIsNotKept) {
  std::vector<std::pair<AbRole, std::string>> journal;
  // The side reports 2 ms a sample: 0.1 s blocks hold 50 samples.
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(2, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(2, c, i); }, &journal);
  AbOptions o;
  o.fixed_rounds = 3;
  o.block_seconds = 0.1;
  const CasePair p = MeasurePair(TimeCase("a"), base, cand, o);
  ASSERT_EQ(journal.size(), 7u);  // the pilot, then 3 rounds of 2 blocks
  EXPECT_EQ(journal[0].first, AbRole::kBaseline);
  EXPECT_EQ(p.baseline_blocks, (std::vector<unsigned>{50, 50, 50}));
  EXPECT_EQ(p.candidate.samples.size(), 150u);
}

// A case that spends a second on set-up (a peak measurement, a model built)
// before 2 ms samples: blocks are sized from the samples' own time, not from
// the case's, or they would hold a tenth of what was asked.
TEST(MeasurePair, BlocksAreSizedFromTheSamplesTimeNotTheCaseSetUp) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(2, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(2, c, i); }, &journal);
  base.SetUpSeconds(1.0);
  cand.SetUpSeconds(1.0);
  AbOptions o;
  o.fixed_rounds = 2;
  o.block_seconds = 0.1;
  const CasePair p = MeasurePair(TimeCase("a"), base, cand, o);
  EXPECT_EQ(p.baseline_blocks, (std::vector<unsigned>{50, 50}));
  EXPECT_EQ(p.candidate_blocks, (std::vector<unsigned>{50, 50}));
}

TEST(MeasurePair, AddsRoundsUntilTheStopRuleIsSatisfied) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  AbOptions o;
  o.fixed_block_samples = 4;
  o.min_rounds = 5;
  std::vector<unsigned> asked;
  const CasePair p = MeasurePair(TimeCase("a"), base, cand, o, 0, [&](const CasePair& so_far) {
    asked.push_back(so_far.rounds);
    return so_far.rounds == 7;
  });
  // Only at the looks: min_rounds, then each time the rounds grow by a quarter.
  EXPECT_EQ(asked, (std::vector<unsigned>{5, 7}));
  EXPECT_EQ(p.rounds, 7u);
  EXPECT_EQ(p.stopped, StopReason::kDecided);
  EXPECT_EQ(journal.size(), 14u);
}

TEST(MeasurePair, StopsAtMaxRoundsOrWhenTheNextRoundWouldOverrunTheBudget) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  AbOptions o;
  o.fixed_block_samples = 4;
  o.max_rounds = 9;
  auto never = [](const CasePair&) { return false; };
  const CasePair capped = MeasurePair(TimeCase("a"), base, cand, o, 0, never);
  EXPECT_EQ(capped.rounds, 9u);
  EXPECT_EQ(capped.stopped, StopReason::kMaxRounds);
  // A budget the minimum rounds cannot fit at the first round's pace: it
  // stops there and says what budget to ask for, instead of judging a round.
  const CasePair broke = MeasurePair(TimeCase("b"), base, cand, o, 1e-12, never);
  EXPECT_EQ(broke.rounds, 1u);
  EXPECT_EQ(broke.stopped, StopReason::kOverBudget);
  EXPECT_NE(broke.note.find("Rerun with --case-budget"), std::string::npos) << broke.note;
  // One that fits min_rounds but not max_rounds: the budget stops it in between.
  const AbOptions adaptive;
  double budget = 20;
  CasePair paced = StartPair(TimeCase("c"));
  EXPECT_TRUE(NextRound(&paced, 1, adaptive, 1.0, &budget, never));  // 5 rounds of 1 s fit 20 s
  EXPECT_TRUE(NextRound(&paced, 9, adaptive, 9.0, &budget, never));
  EXPECT_FALSE(NextRound(&paced, 10, adaptive, 19.5, &budget, never));  // a next round would end past 20 s
  EXPECT_EQ(paced.stopped, StopReason::kBudget);
}

TEST(NextRound, AutoBudgetGrowsToWhatTheStopRulesLastLookNeedsAtTheFirstRoundsPace) {
  AbOptions o;
  o.auto_budget = true;
  auto never = [](const CasePair&) { return false; };
  CasePair pair = StartPair(TimeCase("a"));
  double budget = 40;
  // A first round of 7 s: 45 rounds take 315 s, a tenth to spare.
  EXPECT_TRUE(NextRound(&pair, 1, o, 7.0, &budget, never));
  EXPECT_DOUBLE_EQ(budget, 346.5);
  // Its rounds run on past where twice the minimum (84 s) would have ended them.
  EXPECT_TRUE(NextRound(&pair, 13, o, 13 * 7.0, &budget, never));
  EXPECT_FALSE(NextRound(&pair, 45, o, 45 * 7.0, &budget, never));
  EXPECT_EQ(pair.stopped, StopReason::kMaxRounds);
  // A quick case whose 45 rounds fit keeps the budget it was given.
  CasePair quick = StartPair(TimeCase("q"));
  budget = 40;
  EXPECT_TRUE(NextRound(&quick, 1, o, 0.5, &budget, never));
  EXPECT_DOUBLE_EQ(budget, 40.0);
  o.auto_budget = false;
  budget = 40;
  CasePair fixed = StartPair(TimeCase("b"));
  EXPECT_FALSE(NextRound(&fixed, 1, o, 7.0, &budget, never));
  EXPECT_EQ(fixed.stopped, StopReason::kOverBudget);
  EXPECT_NE(fixed.note.find("--case-budget 63"), std::string::npos) << fixed.note;  // 60 s * 42 / 40
}

// --time-budget bounds the whole job: the auto budget grows only as far as
// the job's share left for this measurement, and a pace whose minimum rounds
// do not fit even that stops the case with the budget it would need.
TEST(NextRound, AutoBudgetNeverGrowsPastTheJobsShare) {
  AbOptions o;
  o.auto_budget = true;
  o.job_budget_s = 300;
  auto never = [](const CasePair&) { return false; };
  // Three measurements to come, none spent yet: 100 s each.
  EXPECT_DOUBLE_EQ(JobShare(o, 0, 3), 100.0);
  EXPECT_DOUBLE_EQ(JobShare(o, 240, 2), 30.0);
  EXPECT_DOUBLE_EQ(JobShare(AbOptions{}, 0, 3), 0.0);  // no job budget: no ceiling
  CasePair pair = StartPair(TimeCase("a"));
  double budget = 40;
  EXPECT_TRUE(NextRound(&pair, 1, o, 7.0, &budget, never, JobShare(o, 0, 3)));
  EXPECT_DOUBLE_EQ(budget, 100.0);  // not the 346.5 s 45 rounds want
  CasePair late = StartPair(TimeCase("b"));
  budget = 20;
  EXPECT_FALSE(NextRound(&late, 1, o, 7.0, &budget, never, JobShare(o, 240, 2)));
  EXPECT_EQ(late.stopped, StopReason::kOverBudget) << late.note;
}

// A 3 s-a-run program under --case-budget auto: 11 rounds took 97 s, past
// the 60 s given. The budget asked for comes from that pace, never from the
// 60 s.
TEST(SayWhatWouldDecide, AsksForTheBudgetTheRoundsNeedAtThePaceTheyKept) {
  CasePair p = StartPair(TimeCase("slow"));
  p.stopped = StopReason::kBudget;
  p.rounds = 11;
  p.seconds = 97;
  gate::GateResult gate;
  gate::MetricVerdict v;
  v.benchmark = p.key;
  v.gating = true;
  v.verdict = gate::Verdict::kTooNoisy;
  v.change = -0.026;
  v.change_ci_low = -0.093;
  v.change_ci_high = 0.046;
  v.tolerance = 0.05;
  gate.verdicts.push_back(v);
  AbOptions o;
  o.auto_budget = true;
  SayWhatWouldDecide({p}, o, &gate);
  const std::string& note = gate.verdicts[0].note;
  // 12 rounds at 97/11 s, a tenth to spare, the first measurement's two thirds of the case.
  EXPECT_NE(note.find("about 12 rounds would bound the interval"), std::string::npos) << note;
  EXPECT_NE(note.find("--case-budget 175"), std::string::npos) << note;

  // Stopped at --max-rounds with the change itself past the tolerance: more
  // rounds, not more seconds, decide it.
  p.stopped = StopReason::kMaxRounds;
  p.rounds = 12;
  gate.verdicts[0] = v;
  gate.verdicts[0].change = 0.76;
  gate.verdicts[0].change_ci_low = -0.01;
  gate.verdicts[0].change_ci_high = 2.13;
  SayWhatWouldDecide({p}, o, &gate);
  EXPECT_NE(gate.verdicts[0].note.find("twice the rounds (--max-rounds 24)"), std::string::npos)
      << gate.verdicts[0].note;
}

TEST(BlockSamplesFor, ASampleThatLastsABlockIsABlockOfItsOwn) {
  AbOptions o;
  EXPECT_EQ(BlockSamplesFor(3.0, o), 1u);                       // a 3 s program run
  EXPECT_EQ(BlockSamplesFor(o.block_seconds, o), 1u);
  EXPECT_EQ(BlockSamplesFor(0.2, o), o.min_block_samples);      // shorter: at least the minimum
  EXPECT_EQ(BlockSamplesFor(0.001, o), 500u);
}

TEST(CaseDecided, IdenticalSidesAreDecidedOnceTheIntervalCanBeBounded) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  AbOptions o;
  o.fixed_block_samples = 4;
  const CasePair p = MeasurePair(TimeCase("a"), base, cand, o, 0, [](const CasePair& so_far) {
    return CaseDecided(so_far, gate::Policy{}, "cpu-test", 1);
  });
  // Identical sides: the t interval of the first look (min_rounds) is
  // already narrow against the tolerance, so the case stops there.
  EXPECT_EQ(p.rounds, o.min_rounds);
  EXPECT_EQ(p.stopped, StopReason::kDecided);
}

TEST(MeasurePair, AFailingBlockFailsTheCaseOnBothSidesWithThatSidesReason) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  base.FailOnCall(1);
  AbOptions o;
  o.fixed_rounds = 4;
  o.fixed_block_samples = 5;
  o.order_seed = 3;
  const CasePair p = MeasurePair(TimeCase("a"), base, cand, o);
  // Round 2's baseline block failed: nothing more ran.
  EXPECT_EQ(journal.size(), BlockOrder(1, o.order_seed)[0] == AbRole::kBaseline ? 3u : 4u);
  for (const CaseResult* r : {&p.baseline, &p.candidate}) {
    EXPECT_EQ(r->status, CaseStatus::kFailed);
    EXPECT_EQ(r->reason, "baseline side: failed: verification failed");
    EXPECT_TRUE(r->samples.empty());
    EXPECT_EQ(r->metrics.size(), 1u);
  }
}

// Two rounds of 5-sample blocks whose sides report power on their first
// `base_calls` and `cand_calls` blocks.
CasePair MeteredPair(unsigned base_calls, unsigned cand_calls) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  base.ReportPowerOnCalls(base_calls);
  cand.ReportPowerOnCalls(cand_calls);
  AbOptions o;
  o.fixed_rounds = 2;
  o.fixed_block_samples = 5;
  return MeasurePair(TimeCase("a"), base, cand, o);
}

TEST(MeasurePair, PoolsTheEnergyMetricsItsBlocksReportAfterTheDeclaredOnes) {
  const CasePair p = MeteredPair(100, 100);
  for (const CaseResult* r : {&p.baseline, &p.candidate}) {
    EXPECT_EQ(r->status, CaseStatus::kOk) << r->reason;
    ASSERT_EQ(r->metrics.size(), 2u);
    EXPECT_EQ(r->metrics[1].name, "power");
    ASSERT_EQ(r->samples.size(), 10u);
    EXPECT_EQ(r->samples[9].values.size(), 2u);
  }
}

TEST(MeasurePair, ABlockThatStopsReportingEnergyFailsTheCase) {
  const CasePair p = MeteredPair(100, 1);  // the candidate's second block has no power
  EXPECT_EQ(p.candidate.status, CaseStatus::kFailed);
  EXPECT_EQ(p.candidate.reason, "candidate side: its blocks reported different metrics");
}

// Case "test/slow" is 10 % slower on the candidate in the first measurement;
// `second_level` is the candidate's level when measured again. Case
// "test/same" is equal on both sides throughout.
AbResult RunWithSecondMeasurement(double second_level, bool confirm,
                                  std::vector<std::pair<AbRole, std::string>>* journal) {
  AbOptions o;
  o.fixed_rounds = 12;  // 12 pairs: enough for p < 0.1 % on a 10 % change
  o.fixed_block_samples = 4;
  o.confirm = confirm;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, journal);
  ScriptedSide cand(
      AbRole::kCandidate,
      [&](const std::string& key, unsigned c, unsigned i) {
        if (key != "test/slow") return Jitter(10, c, i);
        return Jitter(c < o.fixed_rounds ? 11.0 : second_level, c, i);
      },
      journal);
  std::ostringstream log;
  return RunAb({TimeCase("slow"), TimeCase("same")}, base, cand, gate::Policy{}, "cpu-test", o, log);
}

TEST(RunAb, WithoutConfirmationAFirstRegressionFailsTheGate) {
  std::vector<std::pair<AbRole, std::string>> journal;
  const AbResult r = RunWithSecondMeasurement(10.0, false, &journal);
  EXPECT_EQ(journal.size(), 48u);
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kRegression);
  ASSERT_NE(VerdictOf(r, "test/slow"), nullptr);
  EXPECT_EQ(VerdictOf(r, "test/slow")->verdict, gate::Verdict::kRegression);
}

TEST(RunAb, ARegressionThatTheConfirmationDoesNotReproducePasses) {
  std::vector<std::pair<AbRole, std::string>> journal;
  const AbResult r = RunWithSecondMeasurement(10.0, true, &journal);
  // Only the suspect case is measured again: 12 more rounds of 2 blocks.
  ASSERT_EQ(journal.size(), 72u);
  for (size_t i = 48; i < journal.size(); ++i) EXPECT_EQ(journal[i].second, "test/slow");
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kPass);
  const gate::MetricVerdict* v = VerdictOf(r, "test/slow");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->verdict, gate::Verdict::kPass);
  EXPECT_NE(v->note.find("second interleaved measurement (first: regression"), std::string::npos) << v->note;
  EXPECT_EQ(r.unconfirmed, std::vector<std::string>{"test/slow"});
  EXPECT_TRUE(r.confirmed.empty());
}

TEST(RunAb, ARegressionThatTheConfirmationReproducesFailsAndSaysItWasConfirmed) {
  std::vector<std::pair<AbRole, std::string>> journal;
  const AbResult r = RunWithSecondMeasurement(11.5, true, &journal);
  EXPECT_EQ(journal.size(), 72u);
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kRegression);
  const gate::MetricVerdict* v = VerdictOf(r, "test/slow");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->verdict, gate::Verdict::kRegression);
  // The verdict is the confirmation's: its change, not the first one's.
  EXPECT_NEAR(v->change, 0.15, 0.01);
  EXPECT_NE(v->note.find("confirmed by a second interleaved measurement"), std::string::npos) << v->note;
  EXPECT_EQ(r.confirmed, std::vector<std::string>{"test/slow"});
  EXPECT_EQ(VerdictOf(r, "test/same")->verdict, gate::Verdict::kPass);
}

// A pair of `rounds` rounds of 4 samples: the baseline at 10, the candidate at `level`.
CasePair PairAt(const std::string& name, double level, unsigned rounds) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [&](auto&, unsigned c, unsigned i) { return Jitter(level, c, i); }, &journal);
  AbOptions o;
  o.fixed_rounds = rounds;
  o.fixed_block_samples = 4;
  return MeasurePair(TimeCase(name), base, cand, o);
}

TEST(MeasureAndDecide, AConfirmationCutShortKeepsTheFirstEvidenceAndDecidesNothing) {
  AbOptions o;  // adaptive: a look needs min_rounds
  unsigned passes = 0;
  const AbResult r = MeasureAndDecide({TimeCase("slow")}, gate::Policy{}, "cpu-test", o,
                                      [&](const std::vector<size_t>&, const std::vector<CasePair>* first, MeasurePass) {
                                        ++passes;
                                        MeasuredCases m;
                                        // First: 12 rounds 10 % slower. Then one round, 19 % faster.
                                        m.pairs.push_back(first == nullptr ? PairAt("slow", 11, 12)
                                                                           : PairAt("slow", 8.1, 1));
                                        return m;
                                      });
  EXPECT_EQ(passes, 2u);
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].rounds, 12u);  // the first measurement is the evidence kept
  const gate::MetricVerdict* v = VerdictOf(r, "test/slow");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->verdict, gate::Verdict::kUndecided) << v->note;
  EXPECT_NEAR(v->change, 0.10, 0.01);  // the first measurement's change, not the round's -19 %
  EXPECT_NE(v->note.find("got 1 of the 5 rounds"), std::string::npos) << v->note;
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kInconclusive);
  EXPECT_EQ(r.cut_short, std::vector<std::string>{"test/slow"});
  EXPECT_TRUE(r.confirmed.empty() && r.unconfirmed.empty());
}

TEST(MeasureAndDecide, ABudgetThatEndsWithTheIntervalAcrossTheToleranceIsNoPassAndSaysWhatWouldDecide) {
  // Rounds that differ by -6 % to +14 % around +4 %: the interval reaches
  // past the 5 % tolerance, but the change is not significant.
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) {
    return Jitter(10.4 * (1 + 0.1 * std::sin(2.1 * c)), c, i);
  }, &journal);
  gate::Policy policy;
  policy.tolerance = 0.05;
  AbOptions o;
  o.fixed_block_samples = 4;
  o.confirm = false;
  const AbResult r = MeasureAndDecide({TimeCase("edge")}, policy, "cpu-test", o,
                                      [&](const std::vector<size_t>&, const std::vector<CasePair>*, MeasurePass) {
                                        MeasuredCases m;
                                        CasePair p = MeasurePair(TimeCase("edge"), base, cand, o);
                                        p.stopped = StopReason::kBudget;  // as a budget that ran out would leave it
                                        m.pairs.push_back(std::move(p));
                                        return m;
                                      });
  const gate::MetricVerdict* v = VerdictOf(r, "test/edge");
  ASSERT_NE(v, nullptr);
  EXPECT_GT(v->change_ci_high, 0.05) << v->note;
  EXPECT_NE(v->verdict, gate::Verdict::kPass) << v->note;
  EXPECT_TRUE(gate::Inconclusive(v->verdict)) << v->note;
  EXPECT_NE(v->note.find("rerun with --case-budget"), std::string::npos) << v->note;
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kInconclusive);
}

TEST(RunAb, SkippedCasesStayOutOfTheGate) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  class SkippingSide final : public Side {
   public:
    CaseResult Measure(const std::string&, unsigned) override {
      CaseResult r;
      r.status = CaseStatus::kSkipped;
      r.reason = "no GPU";
      return r;
    }
  } cand;
  std::ostringstream log;
  const AbResult r = RunAb({TimeCase("a")}, base, cand, gate::Policy{}, "cpu-test", AbOptions{}, log);
  EXPECT_TRUE(r.gate.verdicts.empty());
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kInconclusive);  // nothing compared is no pass
  ASSERT_EQ(r.pairs.size(), 1u);
  EXPECT_EQ(r.pairs[0].candidate.status, CaseStatus::kSkipped);
  EXPECT_EQ(r.pairs[0].candidate.reason, "candidate side: skipped: no GPU");
}

}  // namespace
}  // namespace perfgate::agent
