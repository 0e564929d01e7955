#include "coordinator/api/query_messages.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <optional>
#include <vector>

#include "common/status_macros.h"
#include "coordinator/domain/evaluate.h"
#include "coordinator/domain/fleet.h"
#include "gate/inference.h"
#include "wire/api_convert.h"
#include "wire/convert.h"
#include "wire/gate_convert.h"
#include "wire/query_convert.h"

namespace perfgate::coordinator {
namespace {

void ToProto(const RunRecord& r, v1::RunInfo* out) {
  out->set_run_id(r.meta.run_id);
  out->set_agent_name(r.meta.agent_name);
  out->set_sku(r.meta.environment.sku);
  out->set_repo(r.meta.repo);
  out->set_branch(r.meta.branch);
  out->set_commit(r.meta.commit);
  out->set_trigger(wire::ToProto(r.meta.trigger));
  out->set_node(r.meta.node);
  out->set_status(wire::ToProto(r.status));
  wire::ToProto(r.meta.started_at, out->mutable_started_at());
  if (r.finished_at) wire::ToProto(*r.finished_at, out->mutable_finished_at());
  out->set_samples(r.samples);
  for (const auto& [k, v] : r.meta.details) (*out->mutable_details())[k] = v;
  for (const std::string& reason : r.invalid_reasons) out->add_invalid_reasons(reason);
  out->set_ci_job(r.meta.ci_job);
  out->set_failure_reason(r.failure_reason);
}

void ToProto(const store::Verdict& v, v1::ReportBrief* out) {
  out->set_report_id(v.report_id);
  out->set_outcome(wire::ToProto(v.outcome));
  out->set_baseline_branch(v.baseline_branch);
  wire::ToProto(v.created_at, out->mutable_created_at());
}

// `answer`'s data_as_of: the moment a standby's data is as of; unset on the primary.
template <typename Answer>
absl::Status SetDataAsOf(Store& store, Answer* answer) {
  PERFGATE_ASSIGN_OR_RETURN(const std::optional<store::ReplicaLag> lag, store.StandbyLag());
  if (lag) wire::ToProto(lag->as_of, answer->mutable_data_as_of());
  return absl::OkStatus();
}

using wire::SetMeasured;

// One row of a comparison: both summaries and the gate's estimate.
v1::CompareRow CompareRowOf(const MetricSummary& b, const MetricSummary& c, const gate::MetricVerdict& g) {
  v1::CompareRow row;
  row.set_benchmark(c.benchmark);
  row.set_metric(c.metric);
  row.set_unit(c.unit);
  row.set_direction(wire::ToProto(c.direction));
  SetMeasured(b.median, &v1::CompareRow::set_base_median, &row);
  SetMeasured(c.median, &v1::CompareRow::set_cand_median, &row);
  SetMeasured(b.p5, &v1::CompareRow::set_base_p5, &row);
  SetMeasured(b.p95, &v1::CompareRow::set_base_p95, &row);
  SetMeasured(c.p5, &v1::CompareRow::set_cand_p5, &row);
  SetMeasured(c.p95, &v1::CompareRow::set_cand_p95, &row);
  // Not estimated (a side all throttled): the change of the medians.
  const bool estimated = std::isfinite(g.change);
  SetMeasured(estimated ? g.change : gate::RelativeChange(b.median, c.median, c.direction == Direction::kHigherIsBetter),
              &v1::CompareRow::set_change, &row);
  SetMeasured(g.change_ci_low, &v1::CompareRow::set_change_ci_low, &row);
  SetMeasured(g.change_ci_high, &v1::CompareRow::set_change_ci_high, &row);
  row.set_method(wire::ToProto(estimated ? g.method : gate::Method::kNone));
  return row;
}

}  // namespace

absl::StatusOr<v1::ListRunsResponse> RunsAnswer(Store& store, const std::string& branch, const std::string& sku,
                                                uint32_t limit) {
  PERFGATE_ASSIGN_OR_RETURN(const std::vector<RunRecord> runs, store.ListRuns(branch, sku, limit));
  std::vector<std::string> ids;
  for (const RunRecord& r : runs) ids.push_back(r.meta.run_id);
  PERFGATE_ASSIGN_OR_RETURN(const auto verdicts, store.GateVerdicts(ids));
  v1::ListRunsResponse out;
  for (const RunRecord& r : runs) {
    v1::RunInfo* info = out.add_runs();
    ToProto(r, info);
    if (auto it = verdicts.find(r.meta.run_id); it != verdicts.end() && !it->second.empty()) {
      ToProto(it->second.front(), info->mutable_latest_report());
    }
  }
  PERFGATE_RETURN_IF_ERROR(SetDataAsOf(store, &out));
  return out;
}

absl::StatusOr<v1::RunDetail> RunAnswer(Store& store, const std::string& run_id) {
  PERFGATE_ASSIGN_OR_RETURN(const RunRecord run, store.GetRun(run_id));
  PERFGATE_ASSIGN_OR_RETURN(const std::vector<MetricSummary> sums, store.GetSummaries(run_id));
  PERFGATE_ASSIGN_OR_RETURN(auto verdicts, store.GateVerdicts({run.meta.run_id}));
  v1::RunDetail out;
  ToProto(run, out.mutable_run());
  v1::RunEnvironment* env = out.mutable_environment();
  env->set_sku(run.meta.environment.sku);
  for (const auto& [k, v] : run.meta.environment.fields) (*env->mutable_fields())[k] = v;
  env->set_hash(run.meta.environment.Hash());
  for (const MetricSummary& m : sums) wire::ToProto(m, out.add_summaries());
  for (const store::Verdict& v : verdicts[run.meta.run_id]) ToProto(v, out.add_reports());
  PERFGATE_RETURN_IF_ERROR(SetDataAsOf(store, &out));
  return out;
}

absl::StatusOr<v1::CompareResponse> CompareAnswer(Store& store, const std::string& base_id,
                                                  const std::string& cand_id) {
  PERFGATE_ASSIGN_OR_RETURN(const RunRecord base, store.GetRun(base_id));
  PERFGATE_ASSIGN_OR_RETURN(const RunRecord cand, store.GetRun(cand_id));
  // Each run's summaries are read once: the rows show them, the estimate judges them.
  PERFGATE_ASSIGN_OR_RETURN(gate::RunData base_data, LoadRunData(store, base));
  PERFGATE_ASSIGN_OR_RETURN(gate::RunData cand_data, LoadRunData(store, cand));
  std::map<std::pair<std::string, std::string>, MetricSummary> base_sums;
  for (const gate::MetricData& m : base_data.metrics) base_sums[{m.summary.benchmark, m.summary.metric}] = m.summary;
  std::vector<MetricSummary> cand_sums;
  for (const gate::MetricData& m : cand_data.metrics) cand_sums.push_back(m.summary);
  std::map<std::pair<std::string, std::string>, gate::MetricVerdict> judged;
  for (gate::MetricVerdict& v : EstimateChanges(std::move(base_data), std::move(cand_data), cand.meta.environment.sku)) {
    judged[{v.benchmark, v.metric}] = std::move(v);
  }
  v1::CompareResponse out;
  ToProto(base, out.mutable_base());
  ToProto(cand, out.mutable_cand());
  std::vector<v1::CompareRow> rows;
  for (const MetricSummary& c : cand_sums) {
    const auto b = base_sums.find({c.benchmark, c.metric});
    const auto g = judged.find({c.benchmark, c.metric});
    if (b != base_sums.end() && g != judged.end()) rows.push_back(CompareRowOf(b->second, c, g->second));
  }
  const auto magnitude = [](const v1::CompareRow& r) { return r.has_change() ? std::abs(r.change()) : -1.0; };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const v1::CompareRow& a, const v1::CompareRow& b) { return magnitude(a) > magnitude(b); });
  for (v1::CompareRow& r : rows) *out.add_rows() = std::move(r);
  return out;
}

absl::StatusOr<v1::FleetResponse> FleetAnswer(Store& store, const std::string& sku, const std::string& sweep,
                                              const gate::FleetOptions& options) {
  PERFGATE_ASSIGN_OR_RETURN(const std::vector<gate::FleetRun> fleet, LoadFleet(store, sku, sweep));
  v1::FleetResponse out;
  wire::ToProto(gate::FindFleetOutliers(fleet, options), &out);
  out.set_sku(sku);
  out.set_sweep(sweep);
  for (const gate::FleetRun& r : fleet) {
    v1::FleetRun* run = out.add_runs();
    run->set_node(r.node);
    run->set_run_id(r.run_id);
    for (const auto& [k, v] : r.fields) (*run->mutable_fields())[k] = v;
  }
  return out;
}

}  // namespace perfgate::coordinator
