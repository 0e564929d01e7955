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

// The rounds whose difference is not set aside as a burst in either block.
std::vector<double> SetAsideBurstRounds(const std::vector<double>& d, unsigned* set_aside) {
  if (d.size() < kMinRoundsToSetAside) return d;
  const double m = stats::Median(d);
  std::vector<double> dev;
  for (double x : d) dev.push_back(x - m);
  const double limit = kBurstSpreads * RobustSpread(dev);
  std::vector<double> kept;
  for (double x : d) {
    if (std::fabs(x - m) > limit) {
      ++*set_aside;
    } else {
      kept.push_back(x);
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
    std::vector<double> d(log_base.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = log_cand[i] - log_base[i];
    SetShift(out, gate::PairedTShift(SetAsideBurstRounds(d, &e.set_aside), e.confidence));
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
