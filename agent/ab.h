// A/B gating in one job on one node (docs/statistics.md, "A/B"): the
// baseline and the candidate builds measure each case in rounds of one
// block a side, each round's order drawn by a coin, so that drift in the
// machine (clocks, neighbours, caches) falls on both sides alike and no
// rhythm of it lines up with one side; the pooled blocks of each side then
// go through the gate engine in A/B mode. A side is an interface so that the orchestration and
// the confirm-before-blocking logic are tested with scripted samples; the
// real side runs a perfgate-agent build as a child process.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/command_line.h"
#include "common/run_types.h"
#include "gate/gate.h"
#include "gate/policy.h"
#include "gate/report.h"

namespace perfgate::agent {

/// Which build a block measures.
enum class AbRole { kBaseline, kCandidate };
/// "baseline" or "candidate".
const char* ToString(AbRole role);

/// Why measuring a pair stopped (gate/report.h).
using gate::StopReason;

/// The order of the two blocks of round `round` (0-based) of a case whose
/// order is drawn from `seed`: a coin per round (SplitMix64 of seed and
/// round), so neither side always runs second on a machine the other has
/// just warmed, and no rhythm of the machine can line up with one side. A
/// fixed alternation (ABBA...) does line up with one: on a 2-core VM whose
/// successive processes' speeds correlate at a lag of four (0.3), ABBA put
/// positions 0 and 3 of every four processes on the baseline, and an A/A's
/// paired t rejected at 5 % in 55-62 % of 30-round windows where a coin per
/// round rejected in 4-5 % (docs/statistics.md, "The order of a round").
std::vector<AbRole> BlockOrder(unsigned round, uint64_t seed);

/// The seed of a case's block order: options.order_seed when set, else
/// drawn afresh (std::random_device), so that jobs do not share one order.
uint64_t OrderSeed(uint64_t order_seed);

/// One build under comparison.
class Side {
 public:
  virtual ~Side() = default;
  /// Measures case `key` with warm-up then exactly `samples` samples. Never
  /// throws: a side that cannot measure returns a failed CaseResult with
  /// the reason.
  virtual CaseResult Measure(const std::string& key, unsigned samples) = 0;
};

/// A side that runs `argv` (a perfgate-agent build, or a wrapper around one)
/// followed by `sample --case KEY --samples N` and `extra_args`, reads the
/// result file it prints on stdout and passes its stderr through.
class CommandSide final : public Side {
 public:
  /// `argv` is the side's command prefix, `extra_args` go after the sample
  /// flags (selection and engine flags shared by both sides).
  CommandSide(std::vector<std::string> argv, std::vector<std::string> extra_args);
  CaseResult Measure(const std::string& key, unsigned samples) override;

 private:
  std::vector<std::string> argv_;
  std::vector<std::string> extra_args_;
};

/// How A/B measures and decides. By default both adapt: blocks are sized
/// by time and rounds are added until every gating metric of the case is
/// decided against its tolerance, or the case's time budget is spent.
struct AbOptions {
  /// Samples per block are chosen so that a block's samples last about this
  /// long: long enough that a scheduler slice or a short burst of a
  /// neighbour cannot dominate one block.
  double block_seconds = 0.5;
  unsigned min_block_samples = 5;
  unsigned fixed_block_samples = 0;  // > 0: every block has exactly this many
  unsigned min_rounds = 5;           // before the first look at the interval
  unsigned max_rounds = 45;          // the most rounds a case gets
  unsigned fixed_rounds = 0;         // > 0: exactly this many rounds, no looks
  /// Seconds one case may take, first measurement and confirmation together:
  /// the first gets two thirds when a confirmation may follow; a case it
  /// leaves undecided with no metric suspected measures on with the rest
  /// (gate::ExtensionBudget); a confirmation gets whatever the first left
  /// (at least a third), or as many rounds as the first took when that is
  /// more (gate::ConfirmationBudget).
  double case_budget_s = 60;
  /// --case-budget auto: after a case's first round, each measurement may
  /// take what max_rounds rounds at that pace need (AutoBudget), when that
  /// is more than its share of case_budget_s: no case ends undecided for
  /// want of time before the stop rule's last look.
  bool auto_budget = false;
  /// Seconds the whole job may take (0: no bound beyond the cases' own);
  /// each case gets at most the budget left over the cases left.
  double job_budget_s = 0;
  bool confirm = true;  // measure suspected regressions again before failing them
  /// The seed of every case's block order (BlockOrder); 0: drawn afresh for
  /// each measurement of a case. Set it to repeat an order exactly.
  uint64_t order_seed = 0;
  /// CPUs both blocks of a round run on (RoundCpus): -1 as many as a
  /// perfgate host case keeps busy (PinCountFor), 0 none, N every case.
  int pin_cpus = -1;
};

/// The CPUs of round `round` (0-based) when both of its blocks run on
/// `count` of `allowed`: a window that moves on by `count` each round, so
/// that the rounds visit every CPU alike and each round's two blocks share
/// one CPU's speed. Both sides alike is the point: left to the scheduler,
/// on a 2-vCPU VM successive processes alternate CPUs, so the two blocks of
/// a round ran on different ones, and with one vCPU 25 % slower (a host
/// neighbour) every round's difference carried that 25 % with a sign the
/// coin chose. Empty (no pin) when `count` is 0 or not fewer than the CPUs
/// allowed.
std::vector<int> RoundCpus(unsigned round, unsigned count, const std::vector<int>& allowed);

/// A pilot block: options.min_block_samples samples of one case, timed, to
/// size the blocks that follow so that each lasts about
/// options.block_seconds. Not kept as a measurement (it also warms the node).
struct Pilot {
  CaseResult block;            // what the pilot measured; its status says whether it ran
  unsigned block_samples = 0;  // samples per block, >= options.min_block_samples; 0 when it failed
};

/// Measures the pilot of case `key` on `side`.
Pilot MeasurePilot(const std::string& key, Side& side, const AbOptions& options);

/// Samples per block so that a block's samples last about
/// options.block_seconds, given one sample's seconds; at least
/// options.min_block_samples, except that a sample which alone lasts
/// block_seconds (a slow program's run) is a block of its own.
unsigned BlockSamplesFor(double seconds_per_sample, const AbOptions& options);

/// A case to compare, as the local registry describes it: its identity and
/// the metrics both sides must report, so that a case neither side could
/// measure is still reported, metric by metric.
struct AbCase {
  BenchmarkId id;
  std::vector<MetricSpec> metrics;
  /// CPUs one process of the case keeps busy, as its suite registers it
  /// (suites::CaseSpec::host_cpus); 0: not said (PinCountFor then reads the
  /// case's threads=).
  unsigned host_cpus = 0;
};

/// The CPUs per round for case `c` under --pin-cpus `pin` (AbOptions::pin_cpus):
/// `pin` itself when set; for auto, the CPUs its suite says it keeps busy,
/// else its threads= when it has one and runs on the host (no backend, or
/// backend=host), else 0 (a GPU case, a case whose threads are not known).
unsigned PinCountFor(const AbCase& c, int pin);

/// One case measured on both sides: each side's blocks pooled into one
/// result, with the sample count of each block. When a block of either side
/// failed or skipped, both results carry that status and the reason,
/// prefixed with the side.
struct CasePair {
  std::string key;
  CaseResult baseline;
  CaseResult candidate;
  std::vector<unsigned> baseline_blocks;   // samples per block, in round order
  std::vector<unsigned> candidate_blocks;
  unsigned rounds = 0;
  /// Why measuring stopped (over budget: see `note`).
  StopReason stopped = StopReason::kNone;
  double seconds = 0;   // wall time the pair took, pilot included
  /// The rounds it had when the measurement now under way went on from
  /// them (MeasurePass::kExtension, kConfirmationExtension); 0 for one that
  /// began from nothing.
  unsigned resumed_at = 0;
  /// Over budget: what min_rounds would take and the budget to ask for.
  std::string note;
};

/// Says whether the pair measured so far decides every gating metric;
/// MeasurePair asks after each round from options.min_rounds on.
using DecidedFn = std::function<bool(const CasePair&)>;

// The steps every A/B measurer takes, whether its blocks come one case at a
// time (perfgate-agent builds) or every case at once (a benchmark program).

/// A pair for case `c` with no blocks yet: both sides status ok, `c`'s metrics.
CasePair StartPair(const AbCase& c);
/// Ends the pair as `status` (failed or skipped) with `reason` prefixed by
/// the side, its blocks dropped, stopped kFailed.
void FailPair(CasePair* pair, AbRole role, CaseStatus status, const std::string& reason);
/// Pools one block of `role` into the pair, its samples numbered on through
/// the side; a block that failed, skipped or reports other metrics than the
/// pair's fails the pair instead (FailPair) and returns false.
bool AddBlock(CasePair* pair, AbRole role, CaseResult block);
/// After `rounds` complete rounds: whether to measure another. Sets
/// pair->rounds, and pair->stopped when not (kRounds, kDecided, kBudget,
/// kMaxRounds), asking `decided` from options.min_rounds on. After the
/// first round, whose time gives the pace, it checks that min_rounds fit
/// `*budget_s` (0: unbounded): with options.auto_budget it raises
/// *budget_s to AutoBudget, never past `most_s` (the job's share, JobShare;
/// 0: none); when they still cannot fit, it stops the pair kOverBudget with
/// a note naming the budget to ask for.
bool NextRound(CasePair* pair, unsigned rounds, const AbOptions& options, double spent_s, double* budget_s,
               const DecidedFn& decided, double most_s = 0);
/// The seconds a measurement needs for options.min_rounds rounds of
/// `round_s` each, a fifth to spare: less and the stop rule can never look.
double RoundsBudget(double round_s, const AbOptions& options);
/// The seconds --case-budget auto gives a measurement whose first round
/// took `round_s`: options.max_rounds rounds, a tenth to spare.
double AutoBudget(double round_s, const AbOptions& options);
/// The --case-budget whose share (MeasurementBudget) for a first
/// measurement is `measurement_s`.
double CaseBudgetFor(double measurement_s, const AbOptions& options);
/// The job's budget left (--time-budget) over the `left` measurements still
/// to come; 0 when the job has no budget of its own.
double JobShare(const AbOptions& options, double job_spent_s, size_t left);

/// Which pass of MeasureAndDecide a measurement belongs to.
enum class MeasurePass {
  kFirst,         // every case, from nothing
  kExtension,     // a case the first left undecided at its budget, measured on from its rounds
  kConfirmation,  // a suspected case, measured again from nothing
  kConfirmationExtension,  // a confirmation left undecided at its budget, measured on from its rounds
};
/// Whether a pass goes on from the pairs it is given rather than from nothing.
inline bool Resumes(MeasurePass pass) {
  return pass == MeasurePass::kExtension || pass == MeasurePass::kConfirmationExtension;
}
/// Whether `pass` measures a suspected case again (a confirmation, or its
/// measuring on): the job's last pass.
inline bool Confirms(MeasurePass pass) {
  return pass == MeasurePass::kConfirmation || pass == MeasurePass::kConfirmationExtension;
}
/// Records the pair's wall time and each side's noise once measuring ends.
void FinishPair(CasePair* pair, double seconds);
/// The seconds one measurement may take: two thirds of the case budget
/// (gate::kFirstMeasurementShare) for a first measurement when a
/// confirmation may follow; for an extension what the first measurement
/// (`first`) left of the case budget, 0 when that cannot reach another look
/// (gate::ExtensionBudget); for a confirmation gate::ConfirmationBudget
/// after the first: at least as many rounds as it took, so that a
/// confirmation is never cut short by the case budget alone; for a
/// confirmation's extension as much time again as the confirmation
/// (`first`) took, 0 when that cannot reach another look
/// (gate::ConfirmationExtensionBudget); never more
/// than the job's budget left over the `left` measurements still to come.
double MeasurementBudget(const AbOptions& options, double job_spent_s, size_t left, const CasePair* first,
                         MeasurePass pass);
/// "N rounds of M samples a side in S s (why)", or the status and reason.
void LogPair(const CasePair& p, std::ostream& log);

/// What one pass over some cases measured: a pair per case asked for, in
/// order, and the error that stopped it early (empty when none did).
struct MeasuredCases {
  std::vector<CasePair> pairs;
  std::string error;
};

/// Where the round engine's blocks come from, one side's block at a time:
/// a perfgate build measures one case a block (MeasurePair), a benchmark
/// program every case at once (RunProgramAb).
class BlockSource {
 public:
  virtual ~BlockSource() = default;
  /// Runs the block of `role` in round `round` (0-based) and pools it into
  /// the pairs not stopped kFailed (AddBlock; FailPair for a case the block
  /// lacks). Returns the error that stops every case, else "".
  virtual std::string Block(AbRole role, unsigned round, std::vector<CasePair>* pairs) = 0;
};

/// The round engine of every A/B: rounds of one block a side from
/// `source`, in BlockOrder() drawn from options.order_seed, until no pair
/// asks for another round (NextRound, the pairs sharing `budget_s` and
/// `most_s`, as they share their blocks), every pair has failed, or a block
/// fails for every case. Pairs that come with rounds go on from them (the
/// fewest of them numbers the first round here), their pace counted from
/// here. Then each pair not failed adds its seconds since
/// `began` (FinishPair); after an error it is stopped kError with a round
/// the error cut short dropped, and a pair without one round fails with the
/// error as its reason.
MeasuredCases MeasureRounds(std::vector<CasePair> pairs, BlockSource& source, const AbOptions& options,
                            double budget_s, const DecidedFn& decided, double most_s,
                            std::chrono::steady_clock::time_point began);

/// Measures `c` in rounds in BlockOrder(), one block on each side per round,
/// and pools each side's blocks. The first block (unless the block size is
/// fixed) is a pilot that sizes blocks to options.block_seconds and is not
/// kept. Stops when `decided` says so, at max_rounds, or when `budget_s`
/// seconds are spent; with options.fixed_rounds it measures exactly that
/// many. Stops at the first block that fails, skips or reports other
/// metrics than `c` names. Given `resume` (a pair of `c` measured before),
/// it goes on from its rounds with its block size, no pilot.
CasePair MeasurePair(const AbCase& c, Side& baseline, Side& candidate, const AbOptions& options,
                     double budget_s = 0, const DecidedFn& decided = {}, double most_s = 0,
                     const CasePair* resume = nullptr);

/// The gate's view of the two sides of measured pairs: per case, the
/// blocks as processes, paired by round.
std::pair<gate::RunData, gate::RunData> SidesOf(const std::vector<CasePair>& pairs);

/// Whether every gating metric of one measured case is decided: judged on
/// that case alone at the policy's fdr over `cases` (the job's case count)
/// and over `looks` (the looks the stop rule may take at one case: a
/// Bonferroni share of the fdr per look, so that looking after every round
/// cannot stop a case on a lucky streak more often than one look would).
bool CaseDecided(const CasePair& pair, const gate::Policy& policy, const std::string& sku,
                 size_t cases, unsigned looks = 1);

/// What an A/B comparison measured and decided.
struct AbResult {
  gate::GateResult gate;
  /// Per case, the measurement the decision rests on: the confirmation's
  /// for re-measured cases, else the first one. Skipped cases included.
  std::vector<CasePair> pairs;
  std::vector<std::string> confirmed;    // keys re-measured whose regression held
  std::vector<std::string> unconfirmed;  // keys re-measured that then passed
  /// Keys whose confirmation got too few rounds to judge: undecided on the
  /// first measurement's evidence.
  std::vector<std::string> cut_short;
  /// Non-empty when a side stopped working: which side, its command and
  /// what became of it. The verdicts rest on the blocks measured before.
  std::string error;
  /// `ab --count` that also timed the cases: the counted pairs (one block
  /// per counted process), sent with each side's run as further parts of
  /// the timed cases (CountPart), so the coordinator stores both witnesses.
  std::vector<CasePair> counted;
};

/// Measures the cases at `which` (indices into the job's cases) in `pass`;
/// `first` is null on the first pass and otherwise the first measurement of
/// each of them, in the same order: an extension goes on from it (and
/// returns it as it was when its budget cannot reach another look), a
/// confirmation takes its budget from it.
using MeasureCasesFn = std::function<MeasuredCases(const std::vector<size_t>& which,
                                                   const std::vector<CasePair>* first, MeasurePass pass)>;

/// Measures every case with `measure`, gates in A/B mode, and with
/// options.confirm measures on (MeasurePass::kExtension) the cases whose
/// budget ended with a gating metric undecided and none suspected, then
/// measures again the cases with a gating metric judged a
/// regression or below its floor, judging them on the second measurement
/// alone (notes say which held); a confirmation that ended at its budget
/// with a gating metric undecided measures on with as much time again
/// (MeasurePass::kConfirmationExtension). A confirmation that got fewer rounds than
/// a first look needs (min_rounds, or the fixed rounds) adds no verdict:
/// the case keeps its first measurement and its failing verdicts become
/// undecided, saying so. A budget that ends with a metric undecided says
/// what more would decide it. An error in a pass ends measuring: the
/// result keeps what was measured before and says why in `error`.
AbResult MeasureAndDecide(const std::vector<AbCase>& cases, const gate::Policy& policy, const std::string& sku,
                          const AbOptions& options, const MeasureCasesFn& measure);

/// Measures every case in `cases` on both sides and gates the candidate
/// against the baseline in A/B mode. Each case adds rounds until its gating
/// metrics are decided (judged on that case alone, at the policy's fdr over
/// the number of cases, so that what stops a case as decided holds in the
/// whole gate) or its budget is spent. With options.confirm, every case with
/// a gating metric judged a regression or below its floor is measured again
/// as a fresh interleaved pair and judged on that: it fails only if the
/// second measurement fails it too, and its notes say so. Skipped cases are
/// left out of the gate. Progress lines go to `log`.
AbResult RunAb(const std::vector<AbCase>& cases, Side& baseline, Side& candidate,
               const gate::Policy& policy, const std::string& sku, const AbOptions& options,
               std::ostream& log);

}  // namespace perfgate::agent
