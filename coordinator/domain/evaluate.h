// A gate request from start to end: find the candidate, choose its baseline
// runs (same branch, same SKU, the environment fields the policy names, same
// node preferred, within the merge-base's ancestry when given), take the
// calibrations of the candidate's node that are neither stale nor of another
// environment, and judge.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store/gate_source.h"
#include "gate/gate.h"

namespace perfgate::coordinator {

using store::RunRecord;

struct GateRequest {
  std::string candidate_run_id;
  gate::Mode mode = gate::Mode::kHistory;
  std::string baseline_branch;  // history mode
  std::string baseline_commit;  // history mode: merge-base; empty = latest runs of the branch
  std::string baseline_run_id;  // A/B mode: the baseline side
  std::string policy_yaml;
  std::string policy_name = "policy.yaml";
};

struct GateEvaluation {
  RunRecord candidate;
  std::vector<RunRecord> baselines;  // newest first
  /// History: other runs of the candidate's commit judged with it, newest first.
  std::vector<RunRecord> candidate_repeats;
  gate::Policy policy;
  gate::GateResult result;
};

/// Evaluates a gate. INVALID_ARGUMENT for a bad request or policy, NOT_FOUND
/// for an unknown run, FAILED_PRECONDITION for a run that is not complete.
absl::StatusOr<GateEvaluation> EvaluateCandidate(store::GateSource& store, const GateRequest& request);

/// A run's data as the gate reads it: its summaries, with the medians of
/// its processes where it ran several (a side of an A/B job).
absl::StatusOr<gate::RunData> LoadRunData(store::GateSource& store, const RunRecord& run);

/// The change of every metric `cand` and `base` (as LoadRunData reads them)
/// both have, estimated as a gate of the pair estimates it (`cand` against
/// `base` as the two sides of an A/B on `sku`, with the default policy):
/// the paired shift of their rounds where both ran as rounds, the shift of
/// their processes' medians where they ran several, else the change of
/// their medians. So wherever a change between two runs is shown, it is the
/// gate's number.
std::vector<gate::MetricVerdict> EstimateChanges(gate::RunData base, gate::RunData cand, const std::string& sku);

/// The images the report names: the candidate's image_digest, and the
/// distinct image_digest values of the baselines in their order.
struct ImageDigests {
  std::string candidate;
  std::vector<std::string> baselines;
};
ImageDigests ImageDigestsOf(const GateEvaluation& ev);

}  // namespace perfgate::coordinator
