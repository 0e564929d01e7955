#include "coordinator/domain/evaluate.h"

#include <algorithm>
#include <future>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/identity.h"
#include "common/status_macros.h"
#include "coordinator/process_medians.h"
#include "gate/calibration.h"

namespace perfgate::coordinator {

using store::BaselineQuery;
using store::CalibrationRecord;
using store::RunSamples;
using store::StoredSummary;

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

// The gate counts the processes of a run whose samples came from several
// (a side of an A/B job). CloseRun stored their medians; for a run closed
// before it did, they are computed here from the run's unthrottled
// samples. A run of one process is one value, its median, which the
// summary holds.
absl::StatusOr<gate::RunData> LoadRunData(store::GateSource& store, const RunRecord& run) {
  gate::RunData data;
  data.run_id = run.meta.run_id;
  data.invalid_reasons = run.invalid_reasons;
  auto summaries = store.GetGateSummaries(run.meta.run_id);
  PERFGATE_RETURN_IF_ERROR(summaries);
  const bool blocked = HasProcessBlocks(run.meta.details);
  const bool stored = std::all_of(summaries->begin(), summaries->end(),
                                  [](const StoredSummary& s) { return s.process_medians.has_value(); });
  RunSamples samples;
  if (blocked && !stored) {
    auto read = store.GetSamples(run.meta.run_id);
    PERFGATE_RETURN_IF_ERROR(read);
    samples = std::move(*read);
  }
  for (StoredSummary& s : *summaries) {
    gate::MetricData m;
    SetStoredBlocks(run.meta.details, s.summary.benchmark, m);
    if (blocked && stored) {
      m.process_medians = std::move(s.process_medians);
    } else if (auto it = samples.find({s.summary.benchmark, s.summary.metric}); it != samples.end()) {
      m.samples = std::move(it->second);
    }
    m.summary = std::move(s.summary);
    data.metrics.push_back(std::move(m));
  }
  return data;
}

std::vector<gate::MetricVerdict> EstimateChanges(gate::RunData base, gate::RunData cand, const std::string& sku) {
  static const gate::Policy* const kDefault =
      new gate::Policy(*gate::ParsePolicy("version: 1\n", "the default policy"));
  // Estimated whatever the runs' fitness to gate: the run's own view says
  // why one is not fit.
  base.invalid_reasons.clear();
  cand.invalid_reasons.clear();
  gate::GateInput input;
  input.mode = gate::Mode::kAb;
  input.sku = sku;
  input.baselines.push_back(std::move(base));
  input.candidate = std::move(cand);
  return gate::EvaluateGate(input, *kDefault).verdicts;
}

namespace {

absl::StatusOr<RunRecord> CompleteRun(store::GateSource& store, const std::string& run_id,
                                      const std::string& role) {
  auto run = store.GetRun(run_id);
  PERFGATE_RETURN_IF_ERROR(run);
  if (run->status != RunStatus::kComplete) {
    return absl::FailedPreconditionError(absl::StrCat(role, " run ", run_id, " is ",
                                                      ToString(run->status),
                                                      "; only complete runs can be gated"));
  }
  return run;
}

// The calibrations of the candidate's node a gate may use: measured on its
// SKU and node, in its environment (a driver or kernel update changes the
// noise floor too), no longer ago than the policy's calibration_max_age.
absl::StatusOr<std::map<std::pair<std::string, std::string>, gate::Calibration>> LoadCalibrations(
    store::GateSource& store, const RunRecord& candidate, const gate::Policy& policy) {
  std::map<std::pair<std::string, std::string>, gate::Calibration> out;
  const RunMeta& meta = candidate.meta;
  if (meta.node.empty()) return out;  // ingested without a node: no node to have calibrated
  auto records = store.GetCalibrations(meta.environment.sku, meta.node, meta.environment.Hash(),
                                       policy.calibration_max_age);
  PERFGATE_RETURN_IF_ERROR(records);
  for (const CalibrationRecord& r : *records) {
    out.try_emplace({r.entry.benchmark, r.entry.metric},
                    gate::Calibration{r.entry.spread, r.entry.processes,
                                      gate::CalibrationSource(r.node, r.measured_at)});
  }
  return out;
}

// What can be refused before anything is read: ids that are not UUIDs, a
// history gate without a branch, an A/B gate of a run against itself.
absl::Status CheckRequest(const GateRequest& request) {
  if (!IsUuid(request.candidate_run_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("candidate_run_id: '", request.candidate_run_id, "' is not a UUID"));
  }
  if (request.mode == gate::Mode::kHistory && request.baseline_branch.empty()) {
    return absl::InvalidArgumentError("baseline_branch: must not be empty for a history gate");
  }
  if (request.mode == gate::Mode::kAb) {
    if (!IsUuid(request.baseline_run_id)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "baseline_run_id: '", request.baseline_run_id,
          "' is not a UUID; an A/B gate names the baseline side's run"));
    }
    if (request.baseline_run_id == request.candidate_run_id) {
      return absl::InvalidArgumentError("baseline_run_id: the same run as the candidate");
    }
  }
  return absl::OkStatus();
}

// A/B: the candidate and the one baseline side the request names, which
// must have run on the candidate's SKU.
absl::Status LoadAbSides(store::GateSource& store, const GateRequest& request, GateEvaluation& ev,
                         gate::GateInput& input) {
  const std::string& sku = ev.candidate.meta.environment.sku;
  // The candidate is read while the baseline is looked up and read: two
  // pooled connections, about half the wait. (An early return waits for it.)
  auto cand_future = std::async(std::launch::async, [&] { return LoadRunData(store, ev.candidate); });
  auto baseline = CompleteRun(store, request.baseline_run_id, "baseline");
  PERFGATE_RETURN_IF_ERROR(baseline);
  if (baseline->meta.environment.sku != sku) {
    return absl::InvalidArgumentError(absl::StrCat(
        "baseline_run_id: run ", request.baseline_run_id, " ran on ",
        baseline->meta.environment.sku, ", the candidate on ", sku,
        "; the two sides of an A/B gate run on one node"));
  }
  auto data = LoadRunData(store, *baseline);
  auto cand_data = cand_future.get();
  PERFGATE_RETURN_IF_ERROR(cand_data);
  PERFGATE_RETURN_IF_ERROR(data);
  input.candidate = std::move(*cand_data);
  input.baselines.push_back(std::move(*data));
  ev.baselines.push_back(std::move(*baseline));
  return absl::OkStatus();
}

// History: the last K runs of the baseline branch (and, with a merge-base,
// of its ancestors) that ran on the candidate's SKU, are fit and match its
// environment; same node first, newest first within.
absl::StatusOr<std::vector<RunRecord>> HistoryBaselines(store::GateSource& store, const GateRequest& request,
                                                        const RunRecord& candidate,
                                                        const gate::Policy& policy) {
  const std::string& sku = candidate.meta.environment.sku;
  BaselineQuery q;
  q.branch = request.baseline_branch;
  q.sku = sku;
  q.exclude_run_id = candidate.meta.run_id;
  if (!request.baseline_commit.empty()) {
    // The merge-base and its ancestors as the candidate's agent listed them.
    q.allowed_commits.push_back(request.baseline_commit);
    const auto& parents = candidate.meta.parent_commits;
    auto it = std::find(parents.begin(), parents.end(), request.baseline_commit);
    if (it != parents.end()) q.allowed_commits.insert(q.allowed_commits.end(), it + 1, parents.end());
  }
  // Fetch more than K: some will fail the environment match.
  q.limit = policy.history * 8;
  auto runs = store.FindBaselineRuns(q);
  PERFGATE_RETURN_IF_ERROR(runs);
  const std::vector<std::string> fields = policy.MatchFields(sku);
  std::vector<RunRecord> comparable;
  for (RunRecord& r : *runs) {
    // A run measured on an unfit node is stored and shown, never a baseline.
    // Runs of the candidate's own commit are more of the candidate, not
    // its baseline (CandidateRepeats).
    const bool same_code = !candidate.meta.commit.empty() && r.meta.commit == candidate.meta.commit;
    if (r.invalid_reasons.empty() && !same_code && Comparable(candidate, r, fields)) {
      comparable.push_back(std::move(r));
    }
  }
  // Same node first (it removes node-to-node variance), newest first within.
  std::stable_partition(comparable.begin(), comparable.end(), [&](const RunRecord& r) {
    return r.meta.node == candidate.meta.node;
  });
  if (comparable.size() > policy.history) comparable.resize(policy.history);
  return comparable;
}

// History: the other complete runs of the candidate's branch and commit on
// its SKU, fit and matching its environment, newest first, at most
// kMaxCandidateRepeats: each one more candidate process, so that one run
// slowed by a neighbour cannot decide the gate alone (gate::kUnconfirmed).
constexpr uint32_t kMaxCandidateRepeats = 4;
absl::StatusOr<std::vector<RunRecord>> CandidateRepeats(store::GateSource& store, const RunRecord& candidate,
                                                        const gate::Policy& policy) {
  const RunMeta& meta = candidate.meta;
  if (meta.commit.empty() || meta.branch.empty()) return std::vector<RunRecord>{};
  BaselineQuery q;
  q.branch = meta.branch;
  q.sku = meta.environment.sku;
  q.exclude_run_id = meta.run_id;
  q.allowed_commits = {meta.commit};
  q.limit = kMaxCandidateRepeats * 4;
  auto runs = store.FindBaselineRuns(q);
  PERFGATE_RETURN_IF_ERROR(runs);
  const std::vector<std::string> fields = policy.MatchFields(meta.environment.sku);
  std::vector<RunRecord> out;
  for (RunRecord& r : *runs) {
    if (out.size() < kMaxCandidateRepeats && r.invalid_reasons.empty() &&
        Comparable(candidate, r, fields)) {
      out.push_back(std::move(r));
    }
  }
  return out;
}

// History: the candidate and the chosen baseline runs as the gate sees them.
// Three pooled connections read at once: the candidate, the older half of
// the baselines and the newer half.
absl::Status LoadHistorySides(store::GateSource& store, const GateEvaluation& ev, gate::GateInput& input) {
  auto cand_future = std::async(std::launch::async, [&] { return LoadRunData(store, ev.candidate); });
  const size_t half = ev.baselines.size() / 2;
  std::vector<absl::StatusOr<gate::RunData>> loaded(ev.baselines.size(), absl::UnknownError("not read"));
  auto older = std::async(std::launch::async, [&] {
    for (size_t i = half; i < ev.baselines.size(); ++i) loaded[i] = LoadRunData(store, ev.baselines[i]);
  });
  for (size_t i = 0; i < half; ++i) loaded[i] = LoadRunData(store, ev.baselines[i]);
  older.get();
  std::vector<absl::StatusOr<gate::RunData>> repeats;
  for (const RunRecord& r : ev.candidate_repeats) repeats.push_back(LoadRunData(store, r));
  auto cand_data = cand_future.get();
  PERFGATE_RETURN_IF_ERROR(cand_data);
  input.candidate = std::move(*cand_data);
  for (auto& data : loaded) {
    PERFGATE_RETURN_IF_ERROR(data);
    input.baselines.push_back(std::move(*data));
  }
  for (auto& data : repeats) {
    PERFGATE_RETURN_IF_ERROR(data);
    input.candidate_repeats.push_back(std::move(*data));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GateEvaluation> EvaluateCandidate(store::GateSource& store, const GateRequest& request) {
  PERFGATE_RETURN_IF_ERROR(CheckRequest(request));
  auto policy = gate::ParsePolicy(request.policy_yaml, request.policy_name);
  PERFGATE_RETURN_IF_ERROR(policy);

  GateEvaluation ev;
  ev.policy = *policy;
  auto candidate = CompleteRun(store, request.candidate_run_id, "candidate");
  PERFGATE_RETURN_IF_ERROR(candidate);
  ev.candidate = std::move(*candidate);

  gate::GateInput input;
  input.mode = request.mode;
  input.sku = ev.candidate.meta.environment.sku;
  auto calibrations = LoadCalibrations(store, ev.candidate, *policy);
  PERFGATE_RETURN_IF_ERROR(calibrations);
  input.calibrations = std::move(*calibrations);
  if (request.mode == gate::Mode::kAb) {
    PERFGATE_RETURN_IF_ERROR(LoadAbSides(store, request, ev, input));
  } else {
    auto baselines = HistoryBaselines(store, request, ev.candidate, *policy);
    PERFGATE_RETURN_IF_ERROR(baselines);
    ev.baselines = std::move(*baselines);
    auto repeats = CandidateRepeats(store, ev.candidate, *policy);
    PERFGATE_RETURN_IF_ERROR(repeats);
    ev.candidate_repeats = std::move(*repeats);
    PERFGATE_RETURN_IF_ERROR(LoadHistorySides(store, ev, input));
  }
  ev.result = gate::EvaluateGate(input, *policy);
  if (!ev.candidate_repeats.empty()) {
    std::vector<std::string> ids;
    for (const RunRecord& r : ev.candidate_repeats) ids.push_back(r.meta.run_id);
    absl::StrAppend(&ev.result.summary, "; the candidate's commit ", ev.candidate.meta.commit,
                    " judged over ", ids.size() + 1, " runs (also ", absl::StrJoin(ids, ", "), ")");
  }
  return ev;
}

ImageDigests ImageDigestsOf(const GateEvaluation& ev) {
  auto digest = [](const RunRecord& r) {
    auto it = r.meta.environment.fields.find("image_digest");
    return it == r.meta.environment.fields.end() ? std::string() : it->second;
  };
  ImageDigests out;
  out.candidate = digest(ev.candidate);
  for (const RunRecord& r : ev.baselines) {
    const std::string d = digest(r);
    if (std::find(out.baselines.begin(), out.baselines.end(), d) == out.baselines.end()) out.baselines.push_back(d);
  }
  return out;
}

}  // namespace perfgate::coordinator
