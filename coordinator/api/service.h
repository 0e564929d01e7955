// The gRPC services. They translate between wire messages and domain calls
// and do nothing else; errors are mapped to gRPC statuses in one place
// (error_mapping.h).
// Every handler starts with the Authenticator's check (auth.h).
#pragma once

#include <grpcpp/grpcpp.h>

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "coordinator/api/auth.h"
#include "coordinator/api/error_mapping.h"
#include "coordinator/store.h"
#include "perfgate/v1/gate.grpc.pb.h"
#include "perfgate/v1/ingest.grpc.pb.h"
#include "perfgate/v1/query.grpc.pb.h"

namespace perfgate::coordinator {

/// Called after a run was closed and the close committed (regression checks).
using RunClosedHook = std::function<void(const std::string& run_id, RunStatus status)>;

class IngestService final : public v1::Ingest::Service {
 public:
  IngestService(Store& store, const Authenticator& auth, RunClosedHook on_closed = {})
      : store_(store), auth_(auth), on_closed_(std::move(on_closed)) {}
  grpc::Status RegisterAgent(grpc::ServerContext* ctx, const v1::RegisterAgentRequest* req,
                             v1::RegisterAgentResponse* resp) override;
  grpc::Status OpenRun(grpc::ServerContext* ctx, const v1::OpenRunRequest* req,
                       v1::OpenRunResponse* resp) override;
  grpc::Status StreamResults(
      grpc::ServerContext* ctx,
      grpc::ServerReaderWriter<v1::BatchAck, v1::ResultBatch>* stream) override;
  grpc::Status CloseRun(grpc::ServerContext* ctx, const v1::CloseRunRequest* req,
                        v1::CloseRunResponse* resp) override;
  grpc::Status PutCalibration(grpc::ServerContext* ctx, const v1::PutCalibrationRequest* req,
                              v1::PutCalibrationResponse* resp) override;

 private:
  Store& store_;
  const Authenticator& auth_;
  RunClosedHook on_closed_;
};

class GateService final : public v1::Gate::Service {
 public:
  GateService(Store& store, Authenticator& auth) : store_(store), auth_(auth) {}
  grpc::Status Evaluate(grpc::ServerContext* ctx, const v1::EvaluateRequest* req,
                        v1::GateReport* resp) override;
  grpc::Status GetReport(grpc::ServerContext* ctx, const v1::GetReportRequest* req,
                         v1::GateReport* resp) override;

 private:
  Store& store_;
  Authenticator& auth_;
};

class QueryService final : public v1::Query::Service {
 public:
  QueryService(Store& store, const Authenticator& auth) : store_(store), auth_(auth) {}
  grpc::Status ListRuns(grpc::ServerContext* ctx, const v1::ListRunsRequest* req,
                        v1::ListRunsResponse* resp) override;
  grpc::Status GetRun(grpc::ServerContext* ctx, const v1::GetRunRequest* req,
                      v1::RunDetail* resp) override;
  grpc::Status History(grpc::ServerContext* ctx, const v1::HistoryRequest* req,
                       v1::HistoryResponse* resp) override;
  grpc::Status Fleet(grpc::ServerContext* ctx, const v1::FleetRequest* req,
                     v1::FleetResponse* resp) override;
  grpc::Status ListCalibrations(grpc::ServerContext* ctx, const v1::ListCalibrationsRequest* req,
                                v1::ListCalibrationsResponse* resp) override;

 private:
  Store& store_;
  const Authenticator& auth_;
};

}  // namespace perfgate::coordinator
