// The gate's rank tests, for 3 or more processes a side (the rounds of an
// A/B job, several result files a side): the Hodges–Lehmann shift of the
// log process medians with its Mann–Whitney interval and p-value, or, for
// the rounds of one interleaved A/B job, of the per-round differences
// (Wilcoxon signed rank). A process hit by a burst moves one rank.
#include <vector>

#include "gate/inference.h"
#include "gate/gate_internal.h"

namespace perfgate::gate::internal {

bool TestBlocks(Entry& e, const std::vector<double>& log_base, const std::vector<double>& log_cand) {
  MetricVerdict& out = e.verdict;
  const bool paired = e.baseline.size() == 1 && e.baseline.front()->rounds && e.candidate->rounds &&
                      log_base.size() == log_cand.size();
  if (paired && log_base.size() >= kMinBlocks) {
    std::vector<double> d(log_base.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = log_cand[i] - log_base[i];
    SetShift(out, stats::HodgesLehmannPaired(d));
    out.method = Method::kBlocks;
    e.paired = true;
    return true;
  }
  if (log_base.size() >= kMinBlocks && log_cand.size() >= kMinBlocks) {
    SetShift(out, stats::HodgesLehmannShift(log_base, log_cand));
    out.method = Method::kBlocks;
    return true;
  }
  return false;
}

}  // namespace perfgate::gate::internal
