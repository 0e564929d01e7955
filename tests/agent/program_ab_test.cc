#include "agent/program_ab.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "common/process.h"
#include "tests/support/processes.h"
#include "tests/agent/ab_verdicts.h"

namespace perfgate::agent {
namespace {

// A level with a little deterministic spread, so that the tests have noise.
double ProgramJitter(double level, unsigned call, unsigned i) {
  return level * (1.0 + 0.002 * std::sin(1.7 * (call * 31 + i) + level));
}

// A program whose result set comes from a script: each Run (counted per
// side) reports every case in `cases` with `samples` (or 3 when the
// program takes none) values of its "time" metric.
class ScriptedProgram final : public Program {
 public:
  using Script = std::function<double(const std::string& name, unsigned run, unsigned i)>;
  ScriptedProgram(std::string side, std::vector<std::string> cases, Script script, std::vector<std::string>* journal)
      : side_(std::move(side)), cases_(std::move(cases)), script_(std::move(script)), journal_(journal) {}

  absl::StatusOr<ResultSet> Run(unsigned samples) override {
    const unsigned run = runs_++;
    journal_->push_back(side_);
    asked_.push_back(samples);
    if (fail_on_run_ && run == *fail_on_run_) {
      return absl::FailedPreconditionError("'./bench' was killed by signal 11 (Segmentation fault)");
    }
    ResultSet set;
    set.format = "scripted";
    for (const std::string& name : cases_) {
      if (missing_ && run >= missing_->second && name == missing_->first) continue;
      CaseResult c;
      c.benchmark.suite = "prog";
      c.benchmark.name = name;
      c.metrics.push_back({"time", "ns", Direction::kLowerIsBetter});
      c.status = CaseStatus::kOk;
      if (name == error_case_) {
        c.status = CaseStatus::kFailed;
        c.reason = "out of memory";
      }
      const unsigned n = takes_samples_ ? samples : 3;
      for (unsigned i = 0; i < n && c.status == CaseStatus::kOk; ++i) {
        c.samples.push_back({i, {script_(name, run, i)}, false});
      }
      c.sample_seconds = own_sample_s_ * c.samples.size();
      set.cases.push_back(std::move(c));
    }
    return set;
  }
  bool TakesSamples() const override { return takes_samples_; }

  void FailOnRun(unsigned run) { fail_on_run_ = run; }
  void DropCaseFromRun(const std::string& name, unsigned run) { missing_ = {name, run}; }
  void ReportErrorFor(const std::string& name) { error_case_ = name; }
  void TakeNoSamples() { takes_samples_ = false; }
  /// The seconds each sample's own timing reports (0: none reported).
  void ReportSampleSeconds(double s) { own_sample_s_ = s; }
  const std::vector<unsigned>& asked() const { return asked_; }

 private:
  std::string side_;
  std::vector<std::string> cases_;
  Script script_;
  std::vector<std::string>* journal_;
  unsigned runs_ = 0;
  std::vector<unsigned> asked_;
  std::optional<unsigned> fail_on_run_;
  std::optional<std::pair<std::string, unsigned>> missing_;
  std::string error_case_;
  bool takes_samples_ = true;
  double own_sample_s_ = 0;
};

// The seed of the rounds' order in these tests (BlockOrder), so that a
// test knows which side runs when.
constexpr uint64_t kOrderSeed = 11;

AbOptions FixedOptions(unsigned rounds) {
  AbOptions o;
  o.fixed_rounds = rounds;
  o.fixed_block_samples = 5;
  o.confirm = false;
  o.order_seed = kOrderSeed;
  return o;
}

TEST(RunProgramAb, RunsAPilotOnTheBaselineThenWholeProgramsInTheDrawnOrder) {
  std::vector<std::string> journal;
  auto flat = [](const std::string&, unsigned run, unsigned i) { return ProgramJitter(100, run, i); };
  ScriptedProgram base("baseline", {"a", "b"}, flat, &journal);
  ScriptedProgram cand("candidate", {"a", "b"}, flat, &journal);
  std::ostringstream log;
  const AbResult r = RunProgramAb(base, cand, gate::Policy{}, "cpu-test", FixedOptions(4), log);
  std::vector<std::string> expected = {"baseline"};  // the pilot
  for (unsigned round = 0; round < 4; ++round) {
    for (AbRole role : BlockOrder(round, kOrderSeed)) expected.push_back(ToString(role));
  }
  EXPECT_EQ(journal, expected);
  ASSERT_EQ(r.pairs.size(), 2u);
  for (const CasePair& p : r.pairs) {
    EXPECT_EQ(p.baseline_blocks, (std::vector<unsigned>{5, 5, 5, 5})) << p.key;
    EXPECT_EQ(p.candidate.samples.size(), 20u) << p.key;
    EXPECT_EQ(p.rounds, 4u);
  }
  EXPECT_EQ(r.pairs[1].key, "prog/b");
  EXPECT_TRUE(r.error.empty()) << r.error;
}

TEST(RunProgramAb, CatchesASlowerCandidateCaseAndPassesTheUnchangedOne) {
  std::vector<std::string> journal;
  ScriptedProgram base("baseline", {"fast", "same"}, [](auto& n, unsigned run, unsigned i) {
    return ProgramJitter(100, run, i);
  }, &journal);
  ScriptedProgram cand("candidate", {"fast", "same"}, [](auto& n, unsigned run, unsigned i) {
    return ProgramJitter(n == "fast" ? 120 : 100, run, i);
  }, &journal);
  AbOptions o;
  o.fixed_block_samples = 5;
  std::ostringstream log;
  const AbResult r = RunProgramAb(base, cand, gate::Policy{}, "cpu-test", o, log);
  const gate::MetricVerdict* slowed = VerdictOf(r, "prog/fast");
  const gate::MetricVerdict* same = VerdictOf(r, "prog/same");
  ASSERT_NE(slowed, nullptr);
  ASSERT_NE(same, nullptr);
  EXPECT_EQ(slowed->verdict, gate::Verdict::kRegression) << slowed->note;
  EXPECT_NEAR(slowed->change, 0.20, 0.01);
  EXPECT_EQ(same->verdict, gate::Verdict::kPass) << same->note;
  // Confirmed by a second pass of both programs.
  EXPECT_EQ(r.confirmed, (std::vector<std::string>{"prog/fast"}));
  EXPECT_NE(slowed->note.find("confirmed by a second interleaved measurement"), std::string::npos);
}

TEST(RunProgramAb, AsksEveryBlockForTheSamplesTheOptionsFixOrNoneWhenTheProgramTakesNone) {
  std::vector<std::string> journal;
  auto flat = [](const std::string&, unsigned run, unsigned i) { return ProgramJitter(100, run, i); };
  ScriptedProgram base("baseline", {"a"}, flat, &journal);
  ScriptedProgram cand("candidate", {"a"}, flat, &journal);
  AbOptions o = FixedOptions(3);
  o.fixed_block_samples = 7;
  std::ostringstream log;
  RunProgramAb(base, cand, gate::Policy{}, "cpu-test", o, log);
  EXPECT_EQ(base.asked(), (std::vector<unsigned>{7, 7, 7, 7}));

  ScriptedProgram own("baseline", {"a"}, flat, &journal);
  ScriptedProgram own_cand("candidate", {"a"}, flat, &journal);
  own.TakeNoSamples();
  own_cand.TakeNoSamples();
  AbOptions adaptive = FixedOptions(3);
  adaptive.fixed_block_samples = 0;
  const AbResult r = RunProgramAb(own, own_cand, gate::Policy{}, "cpu-test", adaptive, log);
  EXPECT_EQ(own_cand.asked(), (std::vector<unsigned>{0, 0, 0}));
  EXPECT_EQ(r.pairs[0].candidate_blocks, (std::vector<unsigned>{3, 3, 3}));
}

// A program whose start costs far more than its samples (an interpreter, a
// test collector): blocks are sized from the samples' own seconds, which
// its result file reports, not from the process's wall time.
TEST(RunProgramAb, SizesBlocksFromTheSamplesOwnSecondsWhereTheFileReportsThem) {
  std::vector<std::string> journal;
  auto flat = [](const std::string&, unsigned run, unsigned i) { return ProgramJitter(100, run, i); };
  ScriptedProgram base("baseline", {"a", "b"}, flat, &journal);
  ScriptedProgram cand("candidate", {"a", "b"}, flat, &journal);
  base.ReportSampleSeconds(0.002);
  cand.ReportSampleSeconds(0.002);
  AbOptions o = FixedOptions(2);
  o.fixed_block_samples = 0;
  o.block_seconds = 0.1;
  std::ostringstream log;
  RunProgramAb(base, cand, gate::Policy{}, "cpu-test", o, log);
  // The pilot asks for one sample a case; 0.1 s of 2 ms samples is 50 a block.
  EXPECT_EQ(base.asked(), (std::vector<unsigned>{1, 50, 50}));
  EXPECT_EQ(cand.asked(), (std::vector<unsigned>{50, 50}));
}

TEST(RunProgramAb, ASideThatCrashesEndsMeasuringWithTheBlocksBeforeKeptInPairs) {
  std::vector<std::string> journal;
  auto flat = [](const std::string&, unsigned run, unsigned i) { return ProgramJitter(100, run, i); };
  ScriptedProgram base("baseline", {"a"}, flat, &journal);
  ScriptedProgram cand("candidate", {"a"}, flat, &journal);
  cand.FailOnRun(2);  // round 3; an order in which the candidate runs second there
  AbOptions o = FixedOptions(6);
  while (BlockOrder(2, o.order_seed)[0] != AbRole::kBaseline) ++o.order_seed;
  std::ostringstream log;
  const AbResult r = RunProgramAb(base, cand, gate::Policy{}, "cpu-test", o, log);
  EXPECT_NE(r.error.find("candidate side, round 3: './bench' was killed by signal 11"), std::string::npos) << r.error;
  ASSERT_EQ(r.pairs.size(), 1u);
  // Round 3's baseline block ran but has no partner: dropped.
  EXPECT_EQ(r.pairs[0].baseline_blocks.size(), 2u);
  EXPECT_EQ(r.pairs[0].candidate_blocks.size(), 2u);
  EXPECT_EQ(r.pairs[0].baseline.samples.size(), 10u);
  EXPECT_EQ(r.pairs[0].stopped, StopReason::kError);
  EXPECT_EQ(journal.size(), 7u);  // the pilot and three rounds; nothing after the crash
}

TEST(RunProgramAb, APilotThatFailsIsAnErrorOfTheBaselineSide) {
  std::vector<std::string> journal;
  auto flat = [](const std::string&, unsigned run, unsigned i) { return ProgramJitter(100, run, i); };
  ScriptedProgram base("baseline", {"a"}, flat, &journal);
  ScriptedProgram cand("candidate", {"a"}, flat, &journal);
  base.FailOnRun(0);
  std::ostringstream log;
  const AbResult r = RunProgramAb(base, cand, gate::Policy{}, "cpu-test", FixedOptions(3), log);
  EXPECT_EQ(r.error.rfind("baseline side, pilot: ", 0), 0u) << r.error;
  EXPECT_TRUE(r.pairs.empty());
  EXPECT_EQ(journal.size(), 1u);
}

TEST(RunProgramAb, ACaseABlockLacksOrReportsAsFailedFailsAloneWithTheSidesReason) {
  std::vector<std::string> journal;
  auto flat = [](const std::string&, unsigned run, unsigned i) { return ProgramJitter(100, run, i); };
  ScriptedProgram base("baseline", {"a", "b", "c"}, flat, &journal);
  ScriptedProgram cand("candidate", {"a", "b", "c"}, flat, &journal);
  cand.DropCaseFromRun("b", 1);
  base.ReportErrorFor("c");
  std::ostringstream log;
  const AbResult r = RunProgramAb(base, cand, gate::Policy{}, "cpu-test", FixedOptions(4), log);
  ASSERT_EQ(r.pairs.size(), 3u);
  EXPECT_EQ(r.pairs[0].candidate.status, CaseStatus::kOk);
  EXPECT_EQ(r.pairs[0].rounds, 4u);
  EXPECT_EQ(r.pairs[1].candidate.status, CaseStatus::kFailed);
  EXPECT_EQ(r.pairs[1].candidate.reason, "candidate side: its result file has no such case in this block");
  EXPECT_EQ(r.pairs[2].baseline.status, CaseStatus::kFailed);
  EXPECT_EQ(r.pairs[2].baseline.reason, "baseline side: failed: out of memory");
  EXPECT_TRUE(r.error.empty());
}

// CommandProgram over real processes (sh and python3 stand in for a
// benchmark program; what matters here is how the process is treated).
class CommandProgramTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = testing::TempDir::Create("perfgate-program-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<testing::TempDir>(std::move(*dir));
  }
  // A Google Benchmark JSON file of one case with `n` repetitions.
  static std::string GbenchJson() {
    return R"({"context": {"date": "2026-01-01", "host_name": "h"}, "benchmarks": [)"
           R"({"name": "BM_A", "run_name": "BM_A", "run_type": "iteration", "repetitions": 2, "repetition_index": 0,)"
           R"( "iterations": 10, "real_time": 5.0, "cpu_time": 5.0, "time_unit": "ns"},)"
           R"({"name": "BM_A", "run_name": "BM_A", "run_type": "iteration", "repetitions": 2, "repetition_index": 1,)"
           R"( "iterations": 10, "real_time": 5.5, "cpu_time": 5.5, "time_unit": "ns"}]})";
  }
  std::unique_ptr<testing::TempDir> dir_;
};

TEST_F(CommandProgramTest, ReplacesThePlaceholdersInsideWords) {
  EXPECT_EQ(ExpandSideCommand({"./b", "--benchmark_out={out}", "--benchmark_repetitions={samples}", "x"}, "/t/1", 9),
            (std::vector<std::string>{"./b", "--benchmark_out=/t/1", "--benchmark_repetitions=9", "x"}));
}

TEST_F(CommandProgramTest, ReadsTheFileTheCommandWroteAtOutAndRemovesIt) {
  const std::string src = dir_->Join("result.json");
  std::ofstream(src) << GbenchJson();
  CommandProgram p({"cp", src, "{out}"}, 30, dir_->path());
  EXPECT_FALSE(p.TakesSamples());
  auto set = p.Run(4);
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->cases.size(), 1u);
  EXPECT_EQ(set->cases[0].samples.size(), 2u);
  EXPECT_FALSE(std::ifstream(dir_->Join("block-1.out")).good());
}

TEST_F(CommandProgramTest, ReadsStdoutWhenTheCommandHasNoOut) {
  const std::string src = dir_->Join("result.json");
  std::ofstream(src) << GbenchJson();
  CommandProgram p({"cat", src}, 30, dir_->path());
  auto set = p.Run(1);
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->cases.size(), 1u);
}

TEST_F(CommandProgramTest, NamesTheCommandAndHowItEndedWhenItFailsHangsOrWritesNothing) {
  CommandProgram exits({"sh", "-c", "exit 3"}, 30, dir_->path());
  auto a = exits.Run(1);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("'sh -c exit 3' exited with 3"), std::string::npos) << a.status();

  CommandProgram killed({"sh", "-c", "kill -SEGV $$"}, 30, dir_->path());
  auto b = killed.Run(1);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("killed by signal 11"), std::string::npos) << b.status();

  // A child of the command that holds the pipe goes with it.
  CommandProgram hangs({"sh", "-c", "sleep 600 & sleep 600"}, 0.5, dir_->path());
  auto c = hangs.Run(1);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("ran past its time limit of 0.5 s and was killed"), std::string::npos)
      << c.status();

  CommandProgram silent({"true", "{out}"}, 30, dir_->path());
  auto d = silent.Run(1);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("exited with 0 but wrote no result file"), std::string::npos) << d.status();

  CommandProgram empty({"touch", "{out}"}, 30, dir_->path());
  auto f = empty.Run(1);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("exited with 0 but wrote no result (an empty file)"), std::string::npos)
      << f.status();

  CommandProgram garbled({"echo", "not a result"}, 30, dir_->path());
  auto e = garbled.Run(1);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("stdout of 'echo not a result'"), std::string::npos) << e.status();
}

}  // namespace
}  // namespace perfgate::agent
