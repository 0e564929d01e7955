#include "coordinator/evaluate.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/identity.h"

namespace perfgate::coordinator {
namespace {

bool Comparable(const RunRecord& candidate, const RunRecord& other,
                const std::vector<std::string>& fields) {
  for (const std::string& f : fields) {
    auto a = candidate.meta.environment.fields.find(f);
    auto b = other.meta.environment.fields.find(f);
    const bool a_has = a != candidate.meta.environment.fields.end();
    const bool b_has = b != other.meta.environment.fields.end();
    if (a_has != b_has || (a_has && a->second != b->second)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<GateEvaluation> EvaluateCandidate(Store& store, const GateRequest& request,
                                                 const Decider& decider) {
  if (!IsUuid(request.candidate_run_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("candidate_run_id: '", request.candidate_run_id, "' is not a UUID"));
  }
  if (request.baseline_branch.empty()) {
    return absl::InvalidArgumentError("baseline_branch: must not be empty");
  }
  auto policy = ParsePolicy(request.policy_yaml, request.policy_name);
  if (!policy.ok()) return policy.status();

  GateEvaluation ev;
  auto candidate = store.GetRun(request.candidate_run_id);
  if (!candidate.ok()) return candidate.status();
  ev.candidate = std::move(*candidate);
  if (ev.candidate.status != RunStatus::kComplete) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", request.candidate_run_id, " is ", ToString(ev.candidate.status),
                     "; only complete runs can be gated"));
  }
  const std::string& sku = ev.candidate.meta.environment.sku;

  BaselineQuery q;
  q.branch = request.baseline_branch;
  q.sku = sku;
  q.exclude_run_id = ev.candidate.meta.run_id;
  if (!request.baseline_commit.empty()) {
    // The merge-base and its ancestors as the candidate's agent listed them.
    q.allowed_commits.push_back(request.baseline_commit);
    const auto& parents = ev.candidate.meta.parent_commits;
    auto it = std::find(parents.begin(), parents.end(), request.baseline_commit);
    if (it != parents.end()) q.allowed_commits.insert(q.allowed_commits.end(), it + 1, parents.end());
  }
  // Fetch more than K: some will fail the environment match.
  q.limit = policy->history * 8;
  auto runs = store.FindBaselineRuns(q);
  if (!runs.ok()) return runs.status();
  const std::vector<std::string> fields = policy->MatchFields(sku);
  std::vector<RunRecord> comparable;
  for (RunRecord& r : *runs) {
    if (Comparable(ev.candidate, r, fields)) comparable.push_back(std::move(r));
  }
  // Same node first (it removes node-to-node variance), newest first within.
  std::stable_partition(comparable.begin(), comparable.end(), [&](const RunRecord& r) {
    return r.meta.node == ev.candidate.meta.node;
  });
  if (comparable.size() > policy->history) comparable.resize(policy->history);
  ev.baselines = std::move(comparable);

  auto cand_summaries = store.GetSummaries(ev.candidate.meta.run_id);
  if (!cand_summaries.ok()) return cand_summaries.status();
  std::vector<std::vector<MetricSummary>> base_summaries;
  for (const RunRecord& r : ev.baselines) {
    auto s = store.GetSummaries(r.meta.run_id);
    if (!s.ok()) return s.status();
    base_summaries.push_back(std::move(*s));
  }
  ev.result = EvaluateGate(sku, *cand_summaries, base_summaries, *policy, decider);
  return ev;
}

}  // namespace perfgate::coordinator
