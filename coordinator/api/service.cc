#include "coordinator/api/service.h"

#include <google/protobuf/io/coded_stream.h>

#include <chrono>
#include <cmath>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "common/row_limits.h"
#include "common/status_macros.h"
#include "coordinator/domain/evaluate.h"
#include "coordinator/domain/metrics.h"
#include "coordinator/domain/notification_events.h"
#include "coordinator/api/query_messages.h"
#include "coordinator/api/report_messages.h"
#include "gate/fleet.h"
#include "gate/history_changes.h"
#include "wire/convert.h"
#include "wire/gate_convert.h"
#include "wire/query_convert.h"
#include "wire/validate.h"
#include "wire/validate_queries.h"

namespace perfgate::coordinator {
namespace {

grpc::Status Invalid(const std::string& message) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, message);
}

// gRPC clients refuse replies over 4 MiB unless told otherwise; a list stops
// short of it, every field of every entry counted.
constexpr size_t kMaxReplyBytes = (4 << 20) - (64 << 10);

}  // namespace

grpc::Status IngestService::RegisterAgent(grpc::ServerContext* ctx,
                                          const v1::RegisterAgentRequest* req,
                                          v1::RegisterAgentResponse* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckAgent(ctx, req->name()));
  if (auto s = wire::ValidateRegisterAgent(*req); !s.ok()) return ToGrpc(s, "RegisterAgent");
  auto id = store_.RegisterAgent(req->name(), req->hostname(), req->version());
  if (!id.ok()) return ToGrpc(id.status(), "RegisterAgent");
  resp->set_agent_id(*id);
  return grpc::Status::OK;
}

grpc::Status IngestService::OpenRun(grpc::ServerContext* ctx, const v1::OpenRunRequest* req,
                                    v1::OpenRunResponse* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckAgent(ctx, req->agent_name()));
  if (auto s = wire::ValidateOpenRun(*req); !s.ok()) return ToGrpc(s, "OpenRun");
  auto meta = wire::FromProto(*req);
  if (!meta.ok()) return ToGrpc(meta.status(), "OpenRun");
  auto reopened = store_.OpenRun(*meta);
  if (!reopened.ok()) return ToGrpc(reopened.status(), "OpenRun");
  resp->set_reopened(*reopened);
  return grpc::Status::OK;
}

grpc::Status IngestService::StreamResults(
    grpc::ServerContext* ctx, grpc::ServerReaderWriter<v1::BatchAck, v1::ResultBatch>* stream) {
  auto caller = auth_.Authorize(ctx, Action::kIngest);
  if (!caller.ok()) return ToGrpc(caller.status(), "StreamResults");
  std::set<std::string> writable_runs;
  v1::ResultBatch batch;
  while (stream->Read(&batch)) {
    // Checked again for every batch: a credential revoked while its run
    // streams stops storing at the next batch, as CloseRun would refuse it.
    if (auto again = auth_.Authorize(ctx, Action::kIngest); !again.ok()) {
      return ToGrpc(again.status(), "StreamResults");
    }
    PERFGATE_RETURN_IF_ERROR(auth_.CheckRunOf(*caller, batch.run_id(), &writable_runs));
    const std::string where = absl::StrCat("batch ", batch.sequence(), ": ");
    if (auto s = wire::ValidateBatch(batch); !s.ok()) return Invalid(where + std::string(s.message()));
    if (!IsUuid(batch.run_id())) return Invalid(where + "run_id: '" + batch.run_id() + "' is not a UUID");
    if (batch.sequence() == 0) return Invalid(where + "sequence: must start at 1");
    if (batch.cases().empty()) return Invalid(where + "cases: a batch carries at least one case");
    std::vector<CaseResult> cases;
    for (int i = 0; i < batch.cases_size(); ++i) {
      auto c = wire::FromProto(batch.cases(i), absl::StrCat("cases[", i, "]"));
      if (!c.ok()) return Invalid(where + std::string(c.status().message()));
      cases.push_back(std::move(*c));
    }
    const auto batch_start = std::chrono::steady_clock::now();
    auto outcome = store_.StoreBatch(batch.run_id(), batch.sequence(), cases);
    if (outcome.ok()) {
      DefaultMetrics().BatchStored(
          outcome->samples_stored,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - batch_start).count(),
          outcome->duplicate);
    } else {
      DefaultMetrics().BatchRefused();
    }
    if (!outcome.ok()) {
      return ToGrpc(absl::Status(outcome.status().code(), where + std::string(outcome.status().message())),
                    "StreamResults");
    }
    v1::BatchAck ack;
    ack.set_sequence(batch.sequence());
    ack.set_duplicate(outcome->duplicate);
    ack.set_samples_stored(outcome->samples_stored);
    if (!stream->Write(ack)) break;  // the agent went away; it will resend
  }
  return grpc::Status::OK;
}

grpc::Status IngestService::CloseRun(grpc::ServerContext* ctx, const v1::CloseRunRequest* req,
                                     v1::CloseRunResponse* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckRun(ctx, req->run_id()));
  if (auto s = wire::ValidateCloseRun(*req); !s.ok()) return ToGrpc(s, "CloseRun");
  auto status = wire::FromProto(req->status(), "status");
  if (!status.ok()) return ToGrpc(status.status(), "CloseRun");
  if (*status == RunStatus::kRunning) return Invalid("status: a run is closed as RUN_COMPLETE or RUN_FAILED");
  const std::vector<std::string> invalid(req->invalid_reasons().begin(),
                                         req->invalid_reasons().end());
  auto out = store_.CloseRun(req->run_id(), *status, req->last_sequence(), req->reason(), invalid);
  if (!out.ok()) return ToGrpc(out.status(), "CloseRun");
  if (on_closed_) on_closed_(req->run_id(), *status);
  resp->set_cases(out->cases);
  resp->set_samples(out->samples);
  return grpc::Status::OK;
}

grpc::Status IngestService::PutCalibration(grpc::ServerContext* ctx,
                                           const v1::PutCalibrationRequest* req,
                                           v1::PutCalibrationResponse* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckAgent(ctx, req->agent_name()));
  if (auto s = wire::ValidatePutCalibration(*req); !s.ok()) return ToGrpc(s, "PutCalibration");
  auto set = wire::FromProto(*req);
  if (!set.ok()) return ToGrpc(set.status(), "PutCalibration");
  auto stored = store_.PutCalibration(req->agent_name(), *set);
  if (!stored.ok()) return ToGrpc(stored.status(), "PutCalibration");
  resp->set_stored(*stored);
  return grpc::Status::OK;
}

grpc::Status GateService::Evaluate(grpc::ServerContext* ctx, const v1::EvaluateRequest* req,
                                   v1::GateReport* resp) {
  auto permit = auth_.AdmitEvaluation(ctx);  // held until the report is stored
  if (!permit.ok()) return ToGrpc(permit.status(), "Evaluate");
  if (auto s = wire::ValidateEvaluate(*req); !s.ok()) return ToGrpc(s, "Evaluate");
  GateRequest request;
  request.candidate_run_id = req->candidate_run_id();
  switch (req->mode()) {
    case v1::GATE_MODE_UNSPECIFIED:
    case v1::GATE_MODE_HISTORY:
      request.mode = gate::Mode::kHistory;
      break;
    case v1::GATE_MODE_AB:
      request.mode = gate::Mode::kAb;
      break;
    default:
      return Invalid(absl::StrCat("mode: unknown value ", static_cast<int>(req->mode())));
  }
  request.baseline_branch = req->baseline_branch();
  request.baseline_commit = req->baseline_commit();
  request.baseline_run_id = req->baseline_run_id();
  request.policy_yaml = req->policy_yaml();
  if (!req->policy_name().empty()) request.policy_name = req->policy_name();
  auto ev = EvaluateCandidate(store_, request);
  if (!ev.ok()) return ToGrpc(ev.status(), "Evaluate");

  resp->set_candidate_run_id(ev->candidate.meta.run_id);
  resp->set_sku(ev->candidate.meta.environment.sku);
  resp->set_candidate_branch(ev->candidate.meta.branch);
  resp->set_candidate_commit(ev->candidate.meta.commit);
  resp->set_baseline_branch(request.mode == gate::Mode::kAb && request.baseline_branch.empty()
                                ? std::string("(A/B baseline side)")
                                : request.baseline_branch);
  for (const RunRecord& r : ev->baselines) resp->add_baseline_run_ids(r.meta.run_id);
  const ImageDigests images = ImageDigestsOf(*ev);
  resp->set_candidate_image_digest(images.candidate);
  for (const std::string& d : images.baselines) resp->add_baseline_image_digests(d);
  wire::ToProto(ev->result, ev->policy.fdr, resp);

  auto id = store_.SaveGateReport(resp->candidate_run_id(), resp->baseline_branch(), ev->result.outcome,
                                 StoredReportJson(*resp), GateFailed(ev->result));
  if (!id.ok()) return ToGrpc(id.status(), "Evaluate");
  DefaultMetrics().GateOutcome(gate::ToString(ev->result.outcome));
  resp->set_report_id(*id);
  return grpc::Status::OK;
}

grpc::Status GateService::GetReport(grpc::ServerContext* ctx, const v1::GetReportRequest* req,
                                    v1::GateReport* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckRead(ctx));
  auto report = StoredReport(store_, req->report_id());
  if (!report.ok()) return ToGrpc(report.status(), "GetReport");
  *resp = *std::move(report);
  return grpc::Status::OK;
}

grpc::Status QueryService::ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                                    v1::ListRunsResponse* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckRead(ctx));
  if (auto s = wire::ValidateListRuns(*req); !s.ok()) return ToGrpc(s, "ListRuns");
  auto limit = RowsFor(kRunRows, req->limit());
  if (!limit.ok()) return ToGrpc(limit.status(), "ListRuns");
  auto answer = RunsAnswer(store_, req->branch(), req->sku(), *limit);
  if (!answer.ok()) return ToGrpc(answer.status(), "ListRuns");
  if (answer->has_data_as_of()) *resp->mutable_data_as_of() = answer->data_as_of();
  size_t bytes = 0;
  for (v1::RunInfo& info : *answer->mutable_runs()) {
    const size_t size = info.ByteSizeLong();
    // The entry's tag and length prefix too.
    bytes += 1 + google::protobuf::io::CodedOutputStream::VarintSize64(size) + size;
    if (bytes > kMaxReplyBytes) {
      resp->set_truncated(true);
      break;
    }
    *resp->add_runs() = std::move(info);
  }
  return grpc::Status::OK;
}

grpc::Status QueryService::GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                                  v1::RunDetail* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckRead(ctx));
  if (auto s = wire::ValidateGetRun(*req); !s.ok()) return ToGrpc(s, "GetRun");
  if (!IsUuid(req->run_id())) return Invalid("run_id: '" + req->run_id() + "' is not a UUID");
  auto answer = RunAnswer(store_, req->run_id());
  if (!answer.ok()) return ToGrpc(answer.status(), "GetRun");
  *resp = *std::move(answer);
  return grpc::Status::OK;
}

grpc::Status QueryService::History(grpc::ServerContext* ctx, const v1::HistoryRequest* req,
                                   v1::HistoryResponse* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckRead(ctx));
  if (auto s = wire::ValidateHistory(*req); !s.ok()) return ToGrpc(s, "History");
  if (auto id = ParseBenchmarkKey(req->benchmark()); !id.ok()) {
    return Invalid(absl::StrCat("benchmark: ", id.status().message()));
  }
  if (req->metric().empty()) return Invalid("metric: must not be empty");
  auto limit = RowsFor(kSeriesPointRows, req->limit());
  if (!limit.ok()) return ToGrpc(limit.status(), "History");
  std::optional<TimePoint> from, to;
  if (req->has_from()) from = wire::FromProto(req->from());
  if (req->has_to()) to = wire::FromProto(req->to());
  auto series = store_.GetHistory(req->benchmark(), req->metric(), req->sku(), req->branch(), *limit, from, to);
  if (!series.ok()) return ToGrpc(series.status(), "History");
  HistoryReport history;
  history.changes = gate::FindHistoryChanges(*series);
  history.series = *std::move(series);
  wire::ToProto(history, resp);
  resp->set_benchmark(req->benchmark());
  resp->set_metric(req->metric());
  return grpc::Status::OK;
}

grpc::Status QueryService::Fleet(grpc::ServerContext* ctx, const v1::FleetRequest* req,
                                 v1::FleetResponse* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckRead(ctx));
  if (auto s = wire::ValidateFleet(*req); !s.ok()) return ToGrpc(s, "Fleet");
  if (req->sku().empty()) return Invalid("sku: must not be empty");
  if (req->sweep().empty()) {
    return Invalid("sweep: must not be empty (the Slurm array job id, Slurm job id or CI job of the sweep)");
  }
  gate::FleetOptions options;
  options.k = req->k() == 0 ? gate::kDefaultFleetK : req->k();
  if (!(options.k > 0) || !std::isfinite(options.k)) return Invalid("k: must be a positive number of MADs");
  options.benchmark_glob = req->benchmark();
  options.metric = req->metric();
  auto answer = FleetAnswer(store_, req->sku(), req->sweep(), options);
  if (!answer.ok()) return ToGrpc(answer.status(), "Fleet");
  *resp = *std::move(answer);
  return grpc::Status::OK;
}

grpc::Status QueryService::ListCalibrations(grpc::ServerContext* ctx,
                                            const v1::ListCalibrationsRequest* req,
                                            v1::ListCalibrationsResponse* resp) {
  PERFGATE_RETURN_IF_ERROR(auth_.CheckRead(ctx));
  if (auto s = wire::ValidateListCalibrations(*req); !s.ok()) return ToGrpc(s, "ListCalibrations");
  const TimePoint now = std::chrono::system_clock::now();
  auto records = store_.GetCalibrations(req->sku(), req->node(), "", std::nullopt);
  if (!records.ok()) return ToGrpc(records.status(), "ListCalibrations");
  for (const CalibrationRecord& r : *records) {
    v1::StoredCalibration* out = resp->add_calibrations();
    out->set_sku(r.sku);
    out->set_node(r.node);
    out->set_environment_hash(r.environment_hash);
    wire::ToProto(r.entry, out->mutable_entry());
    wire::ToProto(r.measured_at, out->mutable_measured_at());
  }
  wire::ToProto(now, resp->mutable_now());
  return grpc::Status::OK;
}

}  // namespace perfgate::coordinator
