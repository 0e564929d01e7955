// The gate for counted metrics (docs/statistics.md, "Counts"): instructions
// per iteration and simulated misses, counted under callgrind. A count is
// nearly deterministic: two processes of one binary agree to within what
// address-space randomisation and the environment's size move (measured
// there), so one process a side decides, against the policy's
// count_tolerance instead of a time tolerance, with no rounds and no test
// of spread. The time gate (gate.h) and this one are two witnesses of one
// change; CombineWitnesses puts them side by side and says what their
// agreement or disagreement means.
#pragma once

#include <string>
#include <vector>

#include "common/count_metrics.h"
#include "common/run_types.h"
#include "gate/gate.h"
#include "gate/policy.h"

namespace perfgate::gate {

/// Judges every metric of the cases of both sides as counts: each sample is
/// one process's count. Regression when the candidate's median grows by more
/// than policy.count_tolerance (sim_tolerance for simulated counts and GPU
/// occupancy;
/// improvement when it shrinks by more), pass
/// within it; too_noisy when two processes of one side differ by more than
/// the tolerance (the count depends on something besides the code); missing
/// or no_baseline where a side has no count. Method kCount; the interval is
/// the range of the changes between every pair of processes.
GateResult JudgeCounts(const std::vector<CaseResult>& baseline, const std::vector<CaseResult>& candidate,
                       const Policy& policy, const std::string& sku);

/// One result of a time gate and a count gate of the same cases: every
/// verdict of both, worst first, one summary. Where a case has both, the
/// notes of its time metrics say what the counts mean for them: a time
/// regression with counts unchanged is the machine's (noise, throttling, a
/// neighbour; confirm by rounds), a count regression with time unchanged is
/// code not (yet) on the critical path, both together the strongest
/// evidence.
GateResult CombineWitnesses(const GateResult& time, const GateResult& counts, const Policy& policy,
                            const std::string& sku);
/// The same notes within one list of verdicts (a gate of runs that hold
/// both, `perfgate-agent run --count`): each verdict of method kCount is a
/// count, every other one of its case gets what the count says of it.
void NoteWitnesses(std::vector<MetricVerdict>& verdicts);

}  // namespace perfgate::gate
