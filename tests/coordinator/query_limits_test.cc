// The read and gate calls at their limits, over real gRPC with a client's
// default 4 MiB reply limit: a list of runs whose every field is as large as
// Ingest allows still arrives, and text that is not UTF-8 is refused naming
// its field.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "perfgate/v1/gate.grpc.pb.h"
#include "tests/coordinator/service_fixture.h"
#include "wire/validate.h"

namespace perfgate::coordinator {
namespace {

class QueryLimitsTest : public ServiceTest {
 protected:
  // A run with the most details and invalid-for-gating reasons Ingest takes,
  // started `minute` minutes after the first.
  std::string StoreLargestRun(int minute) {
    RunMeta meta;
    meta.run_id = NewUuid();
    meta.agent_name = "node-1";
    meta.environment = {"cpu-amd-epyc", {{"cpu_model", "AMD EPYC"}}};
    meta.branch = "main";
    meta.started_at = std::chrono::system_clock::from_time_t(1'790'000'000) + std::chrono::minutes(minute);
    for (int i = 0; i < 16; ++i) meta.details["k" + std::to_string(100 + i)] = std::string(1000, 'd');
    v1::OpenRunRequest open;
    wire::ToProto(meta, &open);
    v1::OpenRunResponse opened;
    grpc::Status s = ingest_->OpenRun(Context().get(), open, &opened);
    EXPECT_TRUE(s.ok()) << s.error_message();
    auto ctx = Context();
    auto stream = ingest_->StreamResults(ctx.get());
    v1::BatchAck ack;
    EXPECT_TRUE(stream->Write(Batch(meta.run_id, 1, {1.0, 2.0})));
    EXPECT_TRUE(stream->Read(&ack));
    stream->WritesDone();
    EXPECT_TRUE(stream->Finish().ok());
    v1::CloseRunRequest close;
    close.set_run_id(meta.run_id);
    close.set_status(v1::RUN_COMPLETE);
    close.set_last_sequence(1);
    for (size_t i = 0; i < wire::kMaxInvalidReasons; ++i) {
      close.add_invalid_reasons(std::to_string(i) + std::string(wire::kMaxInvalidReason - 4, 'r'));
    }
    v1::CloseRunResponse closed;
    s = ingest_->CloseRun(Context().get(), close, &closed);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return meta.run_id;
  }
};

TEST_F(QueryLimitsTest, SixtyRunsOfTheLargestMetadataAreListedInOneReplyMarkedTruncated) {
  v1::RegisterAgentRequest reg;
  reg.set_name("node-1");
  v1::RegisterAgentResponse reg_resp;
  ASSERT_TRUE(ingest_->RegisterAgent(Context().get(), reg, &reg_resp).ok());
  std::vector<std::string> ids;
  for (int i = 0; i < 60; ++i) ids.push_back(StoreLargestRun(i));
  ASSERT_FALSE(HasFailure());

  v1::ListRunsRequest req;
  req.set_limit(200);
  v1::ListRunsResponse resp;
  grpc::Status s = query_->ListRuns(Context().get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(resp.truncated());
  EXPECT_LE(resp.ByteSizeLong(), 4u << 20);
  std::cout << resp.runs_size() << " of 60 runs in one reply of " << resp.ByteSizeLong() << " bytes\n";
  ASSERT_GT(resp.runs_size(), 20);
  ASSERT_LT(resp.runs_size(), 60);
  // The newest, each whole.
  for (int i = 0; i < resp.runs_size(); ++i) {
    EXPECT_EQ(resp.runs(i).run_id(), ids[59 - i]);
    EXPECT_EQ(resp.runs(i).invalid_reasons_size(), 64);
    EXPECT_EQ(resp.runs(i).details_size(), 16);
  }

  req.set_limit(10);
  resp.Clear();
  ASSERT_TRUE(query_->ListRuns(Context().get(), req, &resp).ok());
  EXPECT_FALSE(resp.truncated());
  EXPECT_EQ(resp.runs_size(), 10);
}

// The bytes of `status` are a refusal of `field`.
void ExpectRefused(const grpc::Status& status, const std::string& field) {
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << field << ": " << status.error_message();
  EXPECT_EQ(status.error_message(), field + ": is not valid UTF-8");
}

TEST_F(QueryLimitsTest, TextThatIsNotUtf8IsInvalidArgumentNamingItsField) {
  const std::string bad = "ma\xffin";
  v1::ListRunsRequest list;
  list.set_sku(bad);
  v1::ListRunsResponse runs;
  ExpectRefused(query_->ListRuns(Context().get(), list, &runs), "sku");

  v1::GetRunRequest get;
  get.set_run_id("\xc3(");
  v1::RunDetail detail;
  ExpectRefused(query_->GetRun(Context().get(), get, &detail), "run_id");

  v1::HistoryRequest history;
  history.set_benchmark("kernels/copy");
  history.set_metric("time");
  history.set_branch(bad);
  v1::HistoryResponse series;
  ExpectRefused(query_->History(Context().get(), history, &series), "branch");

  v1::FleetRequest fleet;
  fleet.set_sku("cpu-amd-epyc");
  fleet.set_sweep(bad);
  v1::FleetResponse outliers;
  ExpectRefused(query_->Fleet(Context().get(), fleet, &outliers), "sweep");

  v1::ListCalibrationsRequest calibrations;
  calibrations.set_node(bad);
  v1::ListCalibrationsResponse stored;
  ExpectRefused(query_->ListCalibrations(Context().get(), calibrations, &stored), "node");

  auto gate = v1::Gate::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                                    grpc::InsecureChannelCredentials()));
  v1::EvaluateRequest evaluate;
  evaluate.set_candidate_run_id(NewUuid());
  evaluate.set_baseline_branch("main");
  evaluate.set_policy_yaml("version: 1\n# \xfe\n");
  v1::GateReport report;
  ExpectRefused(gate->Evaluate(Context().get(), evaluate, &report), "policy_yaml");
  evaluate.set_policy_yaml("version: 1\n");
  evaluate.set_baseline_branch(bad);
  ExpectRefused(gate->Evaluate(Context().get(), evaluate, &report), "baseline_branch");
}

}  // namespace
}  // namespace perfgate::coordinator
