// The gate's test for 3 or more processes a side.
//
// The rounds of one interleaved A/B job are paired: round i's difference of
// log block medians cancels the drift both blocks share. Interference only
// ever slows a block down, and a burst can slow one by tens of percent, so
// from kMinRoundsToSetAside rounds on, a round whose difference lies further
// from the median difference than kBurstSpreads robust spreads (1.4826
// times the median absolute deviation), either way since a burst may hit
// either block, is set aside first; a real change moves every round
// together and sets none aside. The rest is tested with Student t on the
// mean difference: its p-value falls with every round the stop rule adds,
// where the signed-rank test's floor (2 / 2^n) keeps a few rounds from ever
// passing the correction over many metrics.
//
// Processes that are not rounds (several result files a side) are compared
// by the Hodges–Lehmann shift of their log medians with the Mann–Whitney
// interval and p-value: one process hit by a burst moves one rank. Unpaired
// sides may also differ by the machine's drift between them, which no test
// can tell from a change; ranks keep such a gate from failing on it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/stats.h"
#include "gate/gate_internal.h"
#include "gate/inference.h"

namespace perfgate::gate::internal {
namespace {

// How many robust spreads from the median difference make a round a burst.
constexpr double kBurstSpreads = 4.0;
// The robust spread is floored at this (0.5 % on the log scale), so that
// rounds of near-identical differences do not make every small wobble a burst.
constexpr double kSpreadFloor = 0.005;

// 1.4826 · the median absolute deviation of the values from their centres.
double RobustSpread(const std::vector<double>& deviations) {
  std::vector<double> a;
  for (double d : deviations) a.push_back(std::fabs(d));
  return std::max(1.4826 * stats::Median(a), kSpreadFloor);
}

// Fewest rounds whose median absolute deviation is steady enough to judge
// a round a burst by; with fewer, every round is kept (a burst then widens
// the interval, and the stop rule adds rounds).
constexpr size_t kMinRoundsToSetAside = 8;

// The smallest of `v` over the rounds not flagged.
double FastestUnflagged(const std::vector<double>& v, const std::vector<bool>& flagged) {
  double fastest = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < v.size(); ++i) {
    if (!flagged[i]) fastest = std::min(fastest, v[i]);
  }
  return fastest;
}

// The rounds whose difference is not set aside as a burst in either block.
// A round stands apart either because one block was slowed or because the
// other was faster than its side's blocks usually are; interference can do
// only the first. So a round is set aside only when the block it does not
// blame is not faster than every block of that side in the rounds that do
// not stand apart (by more than half the limit: one of them is the fastest
// by a hair as often as not). Where the blocks of a round ran on CPUs of different
// speeds (a 2-vCPU VM whose scheduler alternates processes between them,
// one vCPU 25 % slower while a host neighbour runs), every round stands
// apart by the gap with a sign the order's coin chose: with 9 of 12 rounds
// slow on one side, the 3 others would be set aside as bursts and the 9
// left would agree on a change of 25 % that is not there. In those 3 the
// side's block is faster than all its 9 others: a state, not a burst.
// `slow_base` and `slow_cand` are the blocks' log values signed so that
// more is slower (a throughput's negated).
std::vector<double> SetAsideBurstRounds(const std::vector<double>& slow_base, const std::vector<double>& slow_cand,
                                        unsigned* set_aside) {
  std::vector<double> d(slow_base.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = slow_cand[i] - slow_base[i];
  if (d.size() < kMinRoundsToSetAside) return d;
  const double m = stats::Median(d);
  std::vector<double> dev;
  for (double x : d) dev.push_back(x - m);
  const double limit = kBurstSpreads * RobustSpread(dev);
  std::vector<bool> flagged(d.size());
  for (size_t i = 0; i < d.size(); ++i) flagged[i] = std::fabs(d[i] - m) > limit;
  const double fastest_base = FastestUnflagged(slow_base, flagged);
  const double fastest_cand = FastestUnflagged(slow_cand, flagged);
  std::vector<double> kept;
  for (size_t i = 0; i < d.size(); ++i) {
    // Above the usual difference the candidate's block is blamed (slowed),
    // so the baseline's is the one that may have been fast; below, the
    // other way round.
    const bool fast_other =
        d[i] > m ? slow_base[i] < fastest_base - limit / 2 : slow_cand[i] < fastest_cand - limit / 2;
    if (flagged[i] && !fast_other) {
      ++*set_aside;
    } else {
      kept.push_back(d[i]);
    }
  }
  return kept;
}

}  // namespace

bool TestBlocks(Entry& e, const std::vector<double>& log_base, const std::vector<double>& log_cand) {
  MetricVerdict& out = e.verdict;
  const bool paired = e.baseline.size() == 1 && e.baseline.front()->rounds && e.candidate->rounds &&
                      log_base.size() == log_cand.size();
  if (paired && log_base.size() >= kMinBlocks) {
    // The test is on log candidate minus log baseline whatever the
    // direction; the bursts are found on the values signed to slow up.
    const double up = out.direction == Direction::kHigherIsBetter ? -1 : 1;
    std::vector<double> slow_base, slow_cand;
    for (size_t i = 0; i < log_base.size(); ++i) {
      slow_base.push_back(up * log_base[i]);
      slow_cand.push_back(up * log_cand[i]);
    }
    std::vector<double> kept = SetAsideBurstRounds(slow_base, slow_cand, &e.set_aside);
    for (double& x : kept) x *= up;
    SetShift(out, gate::PairedTShift(kept, e.confidence));
    out.method = Method::kBlocks;
    e.paired = true;
    return true;
  }
  if (log_base.size() >= kMinBlocks && log_cand.size() >= kMinBlocks) {
    SetShift(out, gate::HodgesLehmannShift(log_base, log_cand, e.confidence));
    out.method = Method::kBlocks;
    e.rank_base = log_base.size();
    e.rank_cand = log_cand.size();
    return true;
  }
  return false;
}

double SmallestRankP(size_t m, size_t n) {
  // C(m+n, m) as a product, in doubles: exact enough for any p that matters.
  double c = 1;
  for (size_t i = 1; i <= m; ++i) c = c * static_cast<double>(n + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / c);
}

size_t ProcessesForRankP(double alpha) {
  size_t n = kMinBlocks;
  while (SmallestRankP(n, n) > alpha && n < 1000) ++n;
  return n;
}

std::string UnreachableRanksNote(const Entry& e, double fdr) {
  if (e.rank_base == 0 || e.tested_metrics == 0) return "";
  const double alone = fdr / static_cast<double>(e.tested_metrics);
  const double floor = SmallestRankP(e.rank_base, e.rank_cand);
  if (floor <= alone) return "";
  return absl::StrFormat(
      "not judged: %zu against %zu processes cannot be significant here: their ranks give p >= %.4g at best, and "
      "the correction over the gate's %zu tested metrics at q = %g asks p <= %.4g of a metric alone. Measure "
      "%zu processes (result files) a side, or interleave the two builds with perfgate-agent ab "
      "--baseline-cmd/--candidate-cmd, whose paired rounds have no such floor",
      e.rank_cand, e.rank_base, floor, e.tested_metrics, fdr, alone, ProcessesForRankP(alone));
}

}  // namespace perfgate::gate::internal
