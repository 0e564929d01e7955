// The gate engine's parts, shared by its files and by no one else (the
// public interface is gate.h): one metric's way through the gate, from the
// verdicts that need no statistics (gate_decision.cc), through the test its
// processes allow (blocks.cc: 3 or more processes a side — A/B rounds
// paired, burst rounds set aside, then t; several result files by ranks; spread.cc: t over the history's or a
// calibration's run-to-run spread), to the verdict (gate_decision.cc).
// gate.cc runs them over every metric and sums up; run_data.cc turns cases
// into the gate's input.
#pragma once

#include <string>
#include <vector>

#include "gate/inference.h"
#include "gate/gate.h"

namespace perfgate::gate::internal {

/// One metric on its way through the gate.
struct Entry {
  MetricVerdict verdict;
  const MetricData* candidate = nullptr;
  std::vector<const MetricData*> repeats;   // history: further runs of the candidate's commit
  std::vector<const MetricData*> baseline;  // one per baseline run having it
  ResolvedRule rule;
  bool decided = false;  // verdict final before the statistics
  bool dropped = false;  // skipped everywhere: nothing to judge, nothing to report
  bool described = false;
  std::string calibration_source;  // the calibration a t test used, if any
  bool paired = false;             // the blocks were tested as rounds
  unsigned set_aside = 0;          // A/B rounds set aside as interference bursts
  unsigned candidate_processes = 0;  // the candidate side's processes, repeats included
  std::vector<double> run_changes;   // history, 2+ runs: each candidate run's change, > 0 worse
  bool run_changes_by_best = false;  // of best samples (else of medians)
  // Unpaired processes compared by ranks (several result files a side):
  // how many a side, and how many metrics of the gate were tested with it.
  size_t rank_base = 0, rank_cand = 0;
  size_t tested_metrics = 0;
  double confidence = 0.95;  // the two-sided level of the change's interval
};

/// Four significant digits and the unit: enough to see a few-percent
/// change, short enough for one line.
std::string WithUnit(double value, const std::string& unit);
/// "12.3 %".
std::string Percent(double fraction);
/// "+12.3 %".
std::string SignedPercent(double fraction);

/// Whether a metric's numbers stand for the code: present, not of a failed
/// case (a wrong result, a crashed rank), with samples and a finite median.
bool Usable(const MetricData* m);

/// Verdicts that need no statistics: missing, all throttled, floor, no
/// baseline. Sets the baseline's and the candidate's medians; marks the
/// entry decided (or dropped) when one applies.
void DecideWithoutStatistics(Entry& e, const std::vector<std::string>& invalid_reasons, Mode mode);

/// A side that could only bound the metric (a ValueBound, a knee beyond the
/// rates swept) against a side that measured it (`medians`: the usable
/// baseline runs' medians; baseline_median already set): the verdict from
/// the end of the change the bound fixes (improvement or pass when the
/// worse end is within the tolerance, regression when the better end is
/// beyond it, else undecided; in history mode a regression stays
/// unconfirmed until each further run of the commit shows it too). False,
/// deciding nothing, when neither side is bounded or both are.
bool DecideBounded(Entry& e, const std::vector<double>& medians, Mode mode);

/// One side's counts of a counted metric: the median and extremes over its
/// processes (each process one count).
struct CountedSide {
  double median = 0, min = 0, max = 0;
  unsigned processes = 0;
  static CountedSide Of(const std::vector<double>& values);  // values not empty
};
/// The verdict of a counted metric (counts.cc; docs/statistics.md,
/// "Counts"): against v.tolerance, with the range of the changes between
/// every pair of processes as its interval (method kCount).
void JudgeCounted(MetricVerdict& v, const CountedSide& base, const CountedSide& cand);
/// The tolerance of counted metric `metric`: the policy's sim_tolerance for
/// a count that moves between processes (IsLooseCount: the simulated ones,
/// GPU occupancy), else its count_tolerance.
double CountTolerance(const std::string& metric, const Policy& policy);
/// A counted metric (common/count_metrics.h) stored with a run or read from
/// result files, once DecideWithoutStatistics left it undecided: judged as
/// counts (JudgeCounted) against the nearest usable baseline run, never by
/// a test of spread.
void DecideCounted(Entry& e);

/// The change, its interval and its p-value, by the strongest test the
/// processes allow; false (and the verdict too_few_runs) when none applies.
bool Test(Entry& e, Mode mode, const Calibration* calibration);

/// Sets the change, its 95 % interval and the p-value from a shift on the
/// log scale, oriented so that a positive change is worse.
void SetShift(MetricVerdict& out, const gate::ShiftEstimate& s);

/// The tests of blocks.cc over the log process medians of the two sides:
/// paired t by round (burst rounds set aside) when both are the rounds of
/// one A/B job, else Hodges–Lehmann with Mann–Whitney; false when a side
/// has fewer than kMinBlocks processes.
bool TestBlocks(Entry& e, const std::vector<double>& log_base, const std::vector<double>& log_cand);

/// The smallest two-sided p-value ranks of m against n processes can give
/// (all of one side beyond all of the other, no ties): 2 / C(m+n, m).
double SmallestRankP(size_t m, size_t n);
/// The fewest processes a side (as many on each) whose SmallestRankP is at
/// most `alpha`.
size_t ProcessesForRankP(double alpha);
/// When ranks of the entry's unpaired processes cannot be significant at
/// the share of `fdr` one metric alone gets among the gate's tested metrics
/// (fdr / tested_metrics): the too_few_runs note that says so and how many
/// processes a side would do; empty when they can, or when not unpaired.
std::string UnreachableRanksNote(const Entry& e, double fdr);

/// The t test of spread.cc over the between-process spread of both sides
/// and of the calibration, when there is one; false (too_few_runs, with what
/// to run) when neither shows a spread.
bool TestSpread(Entry& e, Mode mode, const Calibration* calibration,
                const std::vector<double>& log_base, const std::vector<double>& log_cand);

/// The verdict of a tested metric: regression, too noisy, improvement or
/// pass, with a note giving the numbers and what they rest on.
void Decide(Entry& e, Mode mode, double fdr);

}  // namespace perfgate::gate::internal
