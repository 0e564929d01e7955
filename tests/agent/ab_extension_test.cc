// A case that its first measurement leaves undecided at its budget measures
// on (MeasurePass::kExtension): from its rounds, no pilot, its pace counted
// from where it went on, judged on all its rounds. A confirmation left
// undecided at its budget does the same (MeasurePass::kConfirmationExtension).
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "agent/ab.h"
#include "gate/gate.h"
#include "tests/agent/ab_sides.h"
#include "tests/agent/ab_verdicts.h"

namespace perfgate::agent {
namespace {

TEST(NextRound, AResumedMeasurementCountsItsPaceFromWhereItWentOn) {
  AbOptions o;
  // 3 s for the one round since it went on from 20: another would overrun 5 s.
  CasePair resumed;
  resumed.resumed_at = 20;
  double budget = 5;
  EXPECT_FALSE(NextRound(&resumed, 21, o, 3.0, &budget, {}));
  EXPECT_EQ(resumed.stopped, StopReason::kBudget);
  // The same 3 s over 21 rounds of its own leave room for another.
  CasePair fresh;
  EXPECT_TRUE(NextRound(&fresh, 21, o, 3.0, &budget, {}));
}

TEST(MeasurePair, GoesOnFromAPairMeasuredBeforeWithItsBlockSizeAndNoPilot) {
  std::vector<std::pair<AbRole, std::string>> journal;
  ScriptedSide base(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  ScriptedSide cand(AbRole::kCandidate, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal);
  AbOptions six;
  six.fixed_rounds = 6;
  six.fixed_block_samples = 4;
  const CasePair first = MeasurePair(TimeCase("a"), base, cand, six);
  ASSERT_EQ(first.rounds, 6u);
  journal.clear();
  AbOptions adaptive;  // block size from a pilot, were it not going on
  adaptive.max_rounds = 9;
  const CasePair more = MeasurePair(TimeCase("a"), base, cand, adaptive, 0, {}, 0, &first);
  EXPECT_EQ(more.rounds, 9u);
  EXPECT_EQ(more.stopped, StopReason::kMaxRounds);
  EXPECT_EQ(journal.size(), 6u);  // 3 rounds of 2 blocks, no pilot
  EXPECT_EQ(more.baseline_blocks, std::vector<unsigned>(9, 4));
  EXPECT_EQ(more.candidate.samples.size(), 36u);
  EXPECT_GE(more.seconds, first.seconds);
}

// Cases: "noisy" swings ±6 % for its first 8 calls a side and is steady
// after them; "steady" is steady throughout; "slow" is 15 % slower;
// "wobbly" is 15 % slower, and swings ±30 % in its calls 8 to 15 (a
// confirmation's first 8 rounds).
class Extension : public ::testing::Test {
 protected:
  Extension()
      : base_(AbRole::kBaseline, [](auto&, unsigned c, unsigned i) { return Jitter(10, c, i); }, &journal_),
        cand_(AbRole::kCandidate,
              [](const std::string& key, unsigned c, unsigned i) {
                const bool swings = key == "test/noisy" && c < 8;
                if (key == "test/slow") return Jitter(11.5, c, i);
                if (key == "test/wobbly") return Jitter(c >= 8 && c < 16 ? 11.5 * (1 + 0.3 * std::sin(2.1 * c)) : 11.5, c, i);
                return Jitter(swings ? 10 * (1 + 0.06 * std::sin(2.1 * c)) : 10, c, i);
              },
              &journal_) {
    options_.fixed_block_samples = 4;
  }

  // The first pass stops at 8 rounds, as a budget that ran out would (a
  // confirmation too, with `eight_confirming`); the extensions go on under
  // the stop rule, unbounded.
  AbResult Run(std::vector<MeasurePass>* passes, std::vector<std::vector<size_t>>* which,
              std::vector<AbCase> cases = {TimeCase("noisy"), TimeCase("steady")}, bool eight_confirming = false) {
    const unsigned looks = gate::StopRuleLooks(options_.min_rounds, options_.max_rounds);
    return MeasureAndDecide(cases, gate::Policy{}, "cpu-test", options_,
                            [&](const std::vector<size_t>& at, const std::vector<CasePair>* first, MeasurePass pass) {
                              passes->push_back(pass);
                              which->push_back(at);
                              MeasuredCases m;
                              for (size_t k = 0; k < at.size(); ++k) {
                                if (pass == MeasurePass::kFirst ||
                                    (eight_confirming && pass == MeasurePass::kConfirmation)) {
                                  AbOptions eight = options_;
                                  eight.fixed_rounds = 8;
                                  m.pairs.push_back(MeasurePair(cases[at[k]], base_, cand_, eight));
                                  m.pairs.back().stopped = StopReason::kBudget;
                                } else {
                                  m.pairs.push_back(MeasurePair(
                                      cases[at[k]], base_, cand_, options_, 0,
                                      [&](const CasePair& p) { return CaseDecided(p, gate::Policy{}, "cpu-test", cases.size(), looks); },
                                      0, Resumes(pass) ? &(*first)[k] : nullptr));
                                }
                              }
                              return m;
                            });
  }

  std::vector<std::pair<AbRole, std::string>> journal_;
  ScriptedSide base_, cand_;
  AbOptions options_;
};

TEST_F(Extension, ACaseUndecidedAtItsBudgetMeasuresOnAndIsJudgedOnAllItsRounds) {
  std::vector<MeasurePass> passes;
  std::vector<std::vector<size_t>> which;
  const AbResult r = Run(&passes, &which);
  ASSERT_EQ(passes, (std::vector<MeasurePass>{MeasurePass::kFirst, MeasurePass::kExtension}));
  EXPECT_EQ(which[1], std::vector<size_t>{0});  // the steady case was decided
  ASSERT_EQ(r.pairs.size(), 2u);
  EXPECT_GT(r.pairs[0].rounds, 8u);
  EXPECT_EQ(r.pairs[0].stopped, StopReason::kDecided);
  EXPECT_EQ(r.pairs[0].baseline_blocks.size(), r.pairs[0].rounds);  // the first 8 rounds kept
  EXPECT_EQ(r.pairs[1].rounds, 8u);
  const gate::MetricVerdict* v = VerdictOf(r, "test/noisy");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->verdict, gate::Verdict::kPass) << v->note;
  EXPECT_NE(v->note.find("undecided after 8 rounds, measured on"), std::string::npos) << v->note;
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kPass);
}

TEST_F(Extension, ACaseThatMeasuredOnKeepsItsNoteWhenAnotherIsConfirmed) {
  std::vector<MeasurePass> passes;
  std::vector<std::vector<size_t>> which;
  const AbResult r = Run(&passes, &which, {TimeCase("noisy"), TimeCase("steady"), TimeCase("slow")});
  ASSERT_EQ(passes, (std::vector<MeasurePass>{MeasurePass::kFirst, MeasurePass::kExtension,
                                              MeasurePass::kConfirmation}));
  EXPECT_EQ(which[1], std::vector<size_t>{0});  // the suspect is confirmed, not measured on
  EXPECT_EQ(which[2], std::vector<size_t>{2});
  EXPECT_EQ(r.confirmed, std::vector<std::string>{"test/slow"});
  const gate::MetricVerdict* v = VerdictOf(r, "test/noisy");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->verdict, gate::Verdict::kPass) << v->note;
  EXPECT_NE(v->note.find("undecided after 8 rounds, measured on"), std::string::npos) << v->note;
  EXPECT_EQ(VerdictOf(r, "test/slow")->note.find("measured on"), std::string::npos);
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kRegression);
}

TEST_F(Extension, AConfirmationUndecidedAtItsBudgetMeasuresOnAndIsJudgedOnAllItsRounds) {
  std::vector<MeasurePass> passes;
  std::vector<std::vector<size_t>> which;
  const AbResult r = Run(&passes, &which, {TimeCase("wobbly"), TimeCase("steady")}, true);
  ASSERT_EQ(passes, (std::vector<MeasurePass>{MeasurePass::kFirst, MeasurePass::kConfirmation,
                                              MeasurePass::kConfirmationExtension}));
  EXPECT_EQ(which[2], std::vector<size_t>{0});
  EXPECT_GT(r.pairs[0].rounds, 8u);
  EXPECT_EQ(r.pairs[0].stopped, StopReason::kDecided);
  EXPECT_EQ(r.pairs[0].baseline_blocks.size(), r.pairs[0].rounds);  // the confirmation's 8 rounds kept
  EXPECT_EQ(r.confirmed, std::vector<std::string>{"test/wobbly"});
  const gate::MetricVerdict* v = VerdictOf(r, "test/wobbly");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->verdict, gate::Verdict::kRegression) << v->note;
  EXPECT_NE(v->note.find("confirmed by a second interleaved measurement"), std::string::npos) << v->note;
  EXPECT_NE(v->note.find("the confirmation was undecided after 8 rounds and measured on"), std::string::npos)
      << v->note;
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kRegression);
}

TEST_F(Extension, NoCaseMeasuresOnWithoutAConfirmationsShare) {
  options_.confirm = false;
  std::vector<MeasurePass> passes;
  std::vector<std::vector<size_t>> which;
  const AbResult r = Run(&passes, &which);
  EXPECT_EQ(passes, std::vector<MeasurePass>{MeasurePass::kFirst});
  EXPECT_TRUE(gate::Undecided(*VerdictOf(r, "test/noisy"))) << VerdictOf(r, "test/noisy")->note;
  EXPECT_EQ(r.gate.outcome, gate::Outcome::kInconclusive);
}

TEST_F(Extension, NoCaseMeasuresOnAtFixedRounds) {
  options_.fixed_rounds = 8;
  std::vector<MeasurePass> passes;
  std::vector<std::vector<size_t>> which;
  const AbResult r = Run(&passes, &which);
  EXPECT_EQ(passes, std::vector<MeasurePass>{MeasurePass::kFirst});
  EXPECT_TRUE(gate::Undecided(*VerdictOf(r, "test/noisy"))) << VerdictOf(r, "test/noisy")->note;
}

}  // namespace
}  // namespace perfgate::agent
