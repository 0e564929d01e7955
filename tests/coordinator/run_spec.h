// What the gate tests over stored runs share: a run in a few fields (one
// case, kernels/sgemm{m=512}, its time in ms, five samples of one value, on
// a node and SKU, in an environment that differs by its kernel), a history
// gate of a candidate, and the ids of the baselines a gate chose.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/domain/evaluate.h"

namespace perfgate::coordinator {

struct RunSpec {
  std::string branch = "main";
  std::string commit = "c0";
  std::string node = "node-a";
  std::string sku = "cpu-amd-epyc";
  std::string kernel = "6.1";
  double time_ms = 10.0;  // every sample's value
  RunStatus status = RunStatus::kComplete;
  std::vector<std::string> parents;
  std::optional<ValueBound> bound;  // set: the case measured no time, only this bound on it
};

/// A history gate of `candidate` against main (from `baseline_commit` when
/// given) under the policy `policy`.
inline absl::StatusOr<GateEvaluation> HistoryGate(store::GateSource& source, const std::string& candidate,
                                                  const std::string& policy, const std::string& baseline_commit = "") {
  GateRequest req;
  req.candidate_run_id = candidate;
  req.baseline_branch = "main";
  req.baseline_commit = baseline_commit;
  req.policy_yaml = policy;
  return EvaluateCandidate(source, req);
}

/// The run ids of the baselines a gate chose, in its order.
inline std::vector<std::string> Ids(const GateEvaluation& ev) {
  std::vector<std::string> out;
  for (const RunRecord& r : ev.baselines) out.push_back(r.meta.run_id);
  return out;
}

}  // namespace perfgate::coordinator
