// The coordinator's services over real gRPC on loopback, in process, against
// a private PostgreSQL: what a client sees for good and bad requests.
#include "coordinator/api/service.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "common/identity.h"
#include "coordinator/api/server.h"
#include "coordinator/store.h"
#include "wire/convert.h"
#include "tests/coordinator/service_fixture.h"

namespace perfgate::coordinator {
namespace {

TEST_F(ServiceTest, ABatchIsAcknowledgedAndAResendIsAcknowledgedAsDuplicate) {
  const std::string run = OpenRun();
  auto ctx = Context();
  auto stream = ingest_->StreamResults(ctx.get());
  v1::BatchAck ack;
  ASSERT_TRUE(stream->Write(Batch(run, 1, {1.0, 2.0, 3.0})));
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_EQ(ack.sequence(), 1u);
  EXPECT_FALSE(ack.duplicate());
  EXPECT_EQ(ack.samples_stored(), 3u);
  ASSERT_TRUE(stream->Write(Batch(run, 1, {1.0, 2.0, 3.0})));
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_TRUE(ack.duplicate());
  EXPECT_EQ(ack.samples_stored(), 0u);
  stream->WritesDone();
  ASSERT_TRUE(stream->Finish().ok());

  v1::CloseRunRequest close;
  close.set_run_id(run);
  close.set_status(v1::RUN_COMPLETE);
  close.set_last_sequence(1);
  v1::CloseRunResponse closed;
  ASSERT_TRUE(ingest_->CloseRun(Context().get(), close, &closed).ok());
  EXPECT_EQ(closed.samples(), 3u);

  v1::GetRunRequest get;
  get.set_run_id(run);
  v1::RunDetail detail;
  ASSERT_TRUE(query_->GetRun(Context().get(), get, &detail).ok());
  ASSERT_EQ(detail.summaries_size(), 1);
  EXPECT_EQ(detail.summaries(0).median(), 2.0);
  // Every statistic the store keeps, as the HTTP API answers the same message.
  EXPECT_DOUBLE_EQ(detail.summaries(0).p5(), 1.1);
  EXPECT_DOUBLE_EQ(detail.summaries(0).p95(), 2.9);
  EXPECT_DOUBLE_EQ(detail.summaries(0).mad(), 1.0);
  EXPECT_LE(detail.summaries(0).median_ci_low(), 2.0);
  EXPECT_EQ(detail.run().status(), v1::RUN_COMPLETE);
  EXPECT_EQ(detail.reports_size(), 0);  // never gated
  EXPECT_FALSE(detail.has_data_as_of());  // the primary answered
}

TEST_F(ServiceTest, DetailsAndInvalidReasonsTravelFromOpenAndCloseToGetRun) {
  v1::RegisterAgentRequest reg;
  reg.set_name("node-1");
  v1::RegisterAgentResponse reg_resp;
  ASSERT_TRUE(ingest_->RegisterAgent(Context().get(), reg, &reg_resp).ok());
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = "node-1";
  meta.environment = {"h100-sxm5-80gb", {{"nvidia_driver", "570.124.06"}}};
  meta.branch = "main";
  meta.started_at = std::chrono::system_clock::now();
  meta.details = {{"gpu0.serial", "1654922001234"}, {"slurm_array_task_id", "7"}};
  v1::OpenRunRequest open;
  wire::ToProto(meta, &open);
  v1::OpenRunResponse opened;
  ASSERT_TRUE(ingest_->OpenRun(Context().get(), open, &opened).ok());

  auto ctx = Context();
  auto stream = ingest_->StreamResults(ctx.get());
  v1::BatchAck ack;
  ASSERT_TRUE(stream->Write(Batch(meta.run_id, 1, {1.0})));
  ASSERT_TRUE(stream->Read(&ack));
  stream->WritesDone();
  ASSERT_TRUE(stream->Finish().ok());

  v1::CloseRunRequest close;
  close.set_run_id(meta.run_id);
  close.set_status(v1::RUN_COMPLETE);
  close.set_last_sequence(1);
  close.add_invalid_reasons("case kernels/copy: 9 of 10 samples throttled (more than half)");
  v1::CloseRunResponse closed;
  ASSERT_TRUE(ingest_->CloseRun(Context().get(), close, &closed).ok());

  v1::GetRunRequest get;
  get.set_run_id(meta.run_id);
  v1::RunDetail detail;
  ASSERT_TRUE(query_->GetRun(Context().get(), get, &detail).ok());
  ASSERT_EQ(detail.run().invalid_reasons_size(), 1);
  EXPECT_EQ(detail.run().invalid_reasons(0), close.invalid_reasons(0));
  EXPECT_EQ(detail.run().details().size(), 2u);
  EXPECT_EQ(detail.run().details().at("gpu0.serial"), "1654922001234");
  EXPECT_EQ(detail.run().details().at("slurm_array_task_id"), "7");
  EXPECT_EQ(detail.environment().sku(), "h100-sxm5-80gb");
  EXPECT_EQ(detail.environment().fields().at("nvidia_driver"), "570.124.06");
  EXPECT_EQ(detail.environment().hash(), meta.environment.Hash());
}

TEST_F(ServiceTest, ANaNSampleIsRefusedNamingTheFieldAndNothingIsStored) {
  const std::string run = OpenRun();
  auto ctx = Context();
  auto stream = ingest_->StreamResults(ctx.get());
  ASSERT_TRUE(stream->Write(Batch(run, 1, {1.0, std::numeric_limits<double>::quiet_NaN()})));
  v1::BatchAck ack;
  EXPECT_FALSE(stream->Read(&ack));
  grpc::Status s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("cases[0].samples[1].values[0]"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("batch 1"), std::string::npos) << s.error_message();

  // The run has no batch: closing it as complete with batch 1 is refused.
  v1::CloseRunRequest close;
  close.set_run_id(run);
  close.set_status(v1::RUN_COMPLETE);
  close.set_last_sequence(1);
  v1::CloseRunResponse closed;
  EXPECT_EQ(ingest_->CloseRun(Context().get(), close, &closed).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(ServiceTest, MalformedRequestsGetInvalidArgumentNamingTheField) {
  v1::OpenRunRequest open;
  open.set_run_id("run-1");
  v1::OpenRunResponse open_resp;
  grpc::Status s = ingest_->OpenRun(Context().get(), open, &open_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("run_id"), std::string::npos) << s.error_message();

  const std::string run = OpenRun();
  v1::ResultBatch bad = Batch(run, 1, {1.0});
  bad.mutable_cases(0)->mutable_metrics(0)->set_direction(v1::DIRECTION_UNSPECIFIED);
  auto ctx = Context();
  auto stream = ingest_->StreamResults(ctx.get());
  stream->Write(bad);
  v1::BatchAck ack;
  EXPECT_FALSE(stream->Read(&ack));
  s = stream->Finish();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("cases[0].metrics[0].direction"), std::string::npos) << s.error_message();

  v1::HistoryRequest history;
  history.set_benchmark("no-slash");
  history.set_metric("time");
  v1::HistoryResponse hresp;
  s = query_->History(Context().get(), history, &hresp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("benchmark"), std::string::npos) << s.error_message();
}

TEST_F(ServiceTest, UnknownRunsAreNotFound) {
  auto ctx = Context();
  auto stream = ingest_->StreamResults(ctx.get());
  stream->Write(Batch(NewUuid(), 1, {1.0}));
  v1::BatchAck ack;
  EXPECT_FALSE(stream->Read(&ack));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::NOT_FOUND);

  v1::GetRunRequest get;
  get.set_run_id(NewUuid());
  v1::RunDetail detail;
  EXPECT_EQ(query_->GetRun(Context().get(), get, &detail).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServiceTest, IngestWithoutOrWithAWrongTokenIsUnauthenticated) {
  v1::RegisterAgentRequest reg;
  reg.set_name("node-1");
  v1::RegisterAgentResponse resp;
  EXPECT_EQ(ingest_->RegisterAgent(Context("").get(), reg, &resp).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ingest_->RegisterAgent(Context("s3cre").get(), reg, &resp).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(ingest_->RegisterAgent(Context().get(), reg, &resp).ok());
}

// The shared token guards every service, not Ingest alone: reads and gates
// without it are refused too.
TEST_F(ServiceTest, QueryAndGateWithoutTheSharedTokenAreUnauthenticated) {
  const std::string run = OpenRun();
  v1::ListRunsResponse runs;
  EXPECT_EQ(query_->ListRuns(Context("").get(), v1::ListRunsRequest(), &runs).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  v1::GetRunRequest get;
  get.set_run_id(run);
  v1::RunDetail detail;
  EXPECT_EQ(query_->GetRun(Context("s3cre").get(), get, &detail).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  auto gate = v1::Gate::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                                    grpc::InsecureChannelCredentials()));
  v1::EvaluateRequest eval;
  eval.set_candidate_run_id(run);
  v1::GateReport report;
  EXPECT_EQ(gate->Evaluate(Context("").get(), eval, &report).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(query_->ListRuns(Context().get(), v1::ListRunsRequest(), &runs).ok());
  EXPECT_EQ(runs.runs_size(), 1);
}

TEST_F(ServiceTest, ReopeningAClosedRunIsAlreadyExists) {
  const std::string run = OpenRun();
  v1::CloseRunRequest close;
  close.set_run_id(run);
  close.set_status(v1::RUN_FAILED);
  close.set_reason("agent gave up");
  v1::CloseRunResponse closed;
  ASSERT_TRUE(ingest_->CloseRun(Context().get(), close, &closed).ok());
  RunMeta meta;
  meta.run_id = run;
  meta.agent_name = "node-1";
  meta.environment = {"cpu-amd-epyc", {}};
  meta.branch = "main";
  meta.started_at = std::chrono::system_clock::now();
  v1::OpenRunRequest req;
  wire::ToProto(meta, &req);
  v1::OpenRunResponse resp;
  EXPECT_EQ(ingest_->OpenRun(Context().get(), req, &resp).error_code(), grpc::StatusCode::ALREADY_EXISTS);
}

// Stores one complete run of kernels/copy{bytes=1024} time on branch main whose
// five samples have median `median`; returns its id.
std::string StoreRunWithMedian(Store& store, const std::string& commit, double median) {
  EXPECT_TRUE(store.RegisterAgent("node-1", "node-1", "test").ok());
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = "node-1";
  meta.environment = {"cpu-amd-epyc", {{"cpu_model", "AMD EPYC"}}};
  meta.branch = "main";
  meta.commit = commit;
  meta.node = "node-1";
  meta.started_at = std::chrono::system_clock::now();
  EXPECT_TRUE(store.OpenRun(meta).ok());
  CaseResult c;
  c.benchmark = {"kernels", "copy", {{"bytes", "1024"}}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  const double spread[] = {-0.002, -0.001, 0, 0.001, 0.002};
  for (uint32_t i = 0; i < 5; ++i) c.samples.push_back({i, {median * (1 + spread[i])}, false});
  c.status = CaseStatus::kOk;
  EXPECT_TRUE(store.StoreBatch(meta.run_id, 1, {c}).ok());
  EXPECT_TRUE(store.CloseRun(meta.run_id, RunStatus::kComplete, 1, "").ok());
  return meta.run_id;
}

// Run-to-run jitter of a few tenths of a percent, in no order a split could exploit.
constexpr double kJitter[] = {0.003, -0.005, 0.001, 0.006, -0.002, -0.004,
                              0.005, -0.001, 0.002, -0.006, 0.0, 0.004};

v1::HistoryResponse CopyHistory(v1::Query::Stub& query) {
  v1::HistoryRequest req;
  req.set_benchmark("kernels/copy{bytes=1024}");
  req.set_metric("time");
  req.set_branch("main");
  v1::HistoryResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  ctx.AddMetadata("authorization", "Bearer s3cret");  // Query, too, needs the token
  grpc::Status s = query.History(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return resp;
}

TEST_F(ServiceTest, HistoryNamesTheCommitWhereTheMedianRoseByAFifth) {
  std::vector<std::string> runs;
  for (int i = 0; i < 12; ++i) {
    const double level = i < 6 ? 10.0 : 12.0;  // run 7 (index 6) is 20 % slower
    runs.push_back(StoreRunWithMedian(*store_, "commit-" + std::to_string(i + 1), level * (1 + kJitter[i])));
  }

  const v1::HistoryResponse history = CopyHistory(*query_);
  ASSERT_EQ(history.points_size(), 12);
  ASSERT_EQ(history.change_points_size(), 1);
  const v1::ChangePoint& c = history.change_points(0);
  EXPECT_EQ(c.index(), 6u);
  EXPECT_EQ(c.commit(), "commit-7");
  EXPECT_EQ(c.run_id(), runs[6]);
  EXPECT_LT(c.p_value(), 0.05);
  EXPECT_GT(c.statistic(), 0);
  EXPECT_NEAR(c.median_before(), 10.0, 0.1);
  EXPECT_NEAR(c.median_after(), 12.0, 0.1);
  EXPECT_NEAR(c.change(), 0.2, 0.02);  // slower is worse for a time
}

TEST_F(ServiceTest, HistoryOfAFlatSeriesHasNoChangePoints) {
  for (int i = 0; i < 12; ++i) StoreRunWithMedian(*store_, "commit-" + std::to_string(i + 1), 10.0 * (1 + kJitter[i]));

  const v1::HistoryResponse history = CopyHistory(*query_);
  EXPECT_EQ(history.points_size(), 12);
  EXPECT_EQ(history.change_points_size(), 0);
}

TEST_F(ServiceTest, HistoryTooShortForTwoSegmentsHasNoChangePoints) {
  for (int i = 0; i < 5; ++i) StoreRunWithMedian(*store_, "commit-" + std::to_string(i + 1), i < 3 ? 10.0 : 20.0);

  const v1::HistoryResponse history = CopyHistory(*query_);
  EXPECT_EQ(history.points_size(), 5);
  EXPECT_EQ(history.change_points_size(), 0);
}

// Stores a complete run of node on sku whose copy samples are times, with
// the given environment fields and details; returns its id.
std::string StoreSweepRun(Store& store, const std::string& node, const std::string& sku,
                          std::map<std::string, std::string> fields,
                          std::map<std::string, std::string> details, const std::vector<double>& times,
                          const std::string& ci_job = "") {
  EXPECT_TRUE(store.RegisterAgent(node, node, "test").ok());
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = node;
  meta.node = node;
  meta.environment = {sku, std::move(fields)};
  meta.branch = "main";
  meta.commit = "abc";
  meta.trigger = Trigger::kSweep;
  meta.ci_job = ci_job;
  meta.started_at = std::chrono::system_clock::now();
  meta.details = std::move(details);
  EXPECT_TRUE(store.OpenRun(meta).ok());
  CaseResult c;
  c.benchmark = {"kernels", "copy", {{"bytes", "268435456"}}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  for (size_t i = 0; i < times.size(); ++i) c.samples.push_back({static_cast<uint32_t>(i), {times[i]}, false});
  c.status = CaseStatus::kOk;
  EXPECT_TRUE(store.StoreBatch(meta.run_id, 1, {c}).ok());
  EXPECT_TRUE(store.CloseRun(meta.run_id, RunStatus::kComplete, 1, "").ok());
  return meta.run_id;
}

TEST_F(ServiceTest, FleetNamesTheSlowNodeOfTheSweepWithItsPcieGeneration) {
  const std::string sku = "h100-sxm5-80gb";
  std::string slow_run;
  for (int i = 0; i < 5; ++i) {
    const std::string node = "gpu-" + std::to_string(i);
    const double base = i == 3 ? 12.0 : 10.0 + 0.01 * i;
    std::map<std::string, std::string> fields = {{"pcie_gen_max", i == 3 ? "4" : "5"}, {"driver", "570.86"}};
    // One node ran as a plain Slurm job, another under CI: both belong to the sweep.
    std::map<std::string, std::string> details = {{i == 1 ? "slurm_job_id" : "slurm_array_job_id", "9001"}};
    if (i == 2) details.clear();
    const std::string run =
        StoreSweepRun(*store_, node, sku, fields, details, {base * 0.999, base, base * 1.001}, i == 2 ? "9001" : "");
    if (i == 3) slow_run = run;
  }
  // Neither another sweep nor another SKU in this sweep is compared.
  StoreSweepRun(*store_, "gpu-9", sku, {{"pcie_gen_max", "3"}}, {{"slurm_array_job_id", "9002"}}, {50, 50, 50});
  StoreSweepRun(*store_, "a100-0", "a100-sxm4-80gb", {{"pcie_gen_max", "4"}}, {{"slurm_array_job_id", "9001"}},
                {40, 40, 40});

  v1::FleetRequest req;
  req.set_sku(sku);
  req.set_sweep("9001");
  v1::FleetResponse resp;
  grpc::Status s = query_->Fleet(Context().get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();

  EXPECT_EQ(resp.nodes(), 5u);
  EXPECT_EQ(resp.k(), 5.0);
  ASSERT_EQ(resp.outliers_size(), 1);
  const v1::FleetOutlier& o = resp.outliers(0);
  EXPECT_EQ(o.node(), "gpu-3");
  EXPECT_EQ(o.run_id(), slow_run);
  EXPECT_EQ(o.benchmark(), "kernels/copy{bytes=268435456}");
  EXPECT_EQ(o.metric(), "time");
  EXPECT_EQ(o.unit(), "ms");
  EXPECT_DOUBLE_EQ(o.node_median(), 12.0);
  EXPECT_DOUBLE_EQ(o.fleet_median(), 10.02);
  EXPECT_GT(o.deviation(), 5.0);
  EXPECT_EQ(o.side(), "worse");
  ASSERT_EQ(o.differing_fields_size(), 1);
  EXPECT_EQ(o.differing_fields(0).name(), "pcie_gen_max");
  EXPECT_EQ(o.differing_fields(0).node_value(), "4");
  EXPECT_EQ(o.differing_fields(0).majority_value(), "5");
  ASSERT_EQ(resp.node_summary_size(), 5);
  EXPECT_EQ(resp.node_summary(0).node(), "gpu-3");
  EXPECT_EQ(resp.node_summary(0).worse(), 1u);

  req.set_benchmark("kernels/triad*");
  ASSERT_TRUE(query_->Fleet(Context().get(), req, &resp).ok());
  EXPECT_EQ(resp.outliers_size(), 0);
}

TEST_F(ServiceTest, FleetRefusesAMissingSweepOrKAndReportsAnEmptySweepAsNotFound) {
  v1::FleetRequest req;
  req.set_sku("h100-sxm5-80gb");
  v1::FleetResponse resp;
  grpc::Status s = query_->Fleet(Context().get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("sweep"), std::string::npos) << s.error_message();

  req.set_sweep("9001");
  req.set_k(-1);
  s = query_->Fleet(Context().get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("k:"), std::string::npos) << s.error_message();

  req.set_k(0);
  req.clear_sku();
  s = query_->Fleet(Context().get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("sku"), std::string::npos) << s.error_message();

  req.set_sku("h100-sxm5-80gb");
  s = query_->Fleet(Context().get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
}

// A calibration of node-1 by the registered agent "node-1".
v1::PutCalibrationRequest Calibration(double spread) {
  CalibrationSet set;
  set.node = "node-1";
  set.environment = {"cpu-amd-epyc", {{"cpu_model", "AMD EPYC"}}};
  set.measured_at = std::chrono::system_clock::now();
  set.entries.push_back({"kernels/copy{bytes=1024}", "time", "ms", Direction::kLowerIsBetter, spread, 10});
  v1::PutCalibrationRequest req;
  wire::ToProto(set, "node-1", &req);
  return req;
}

TEST_F(ServiceTest, PutCalibrationRefusesANaNSpreadNamingTheField) {
  OpenRun();  // registers the agent
  v1::PutCalibrationResponse resp;
  grpc::Status s = ingest_->PutCalibration(
      Context().get(), Calibration(std::numeric_limits<double>::quiet_NaN()), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("entries[0].spread"), std::string::npos) << s.error_message();

  v1::PutCalibrationRequest few = Calibration(0.01);
  few.mutable_entries(0)->set_processes(1);
  s = ingest_->PutCalibration(Context().get(), few, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("entries[0].processes"), std::string::npos) << s.error_message();

  v1::PutCalibrationRequest bad_key = Calibration(0.01);
  bad_key.mutable_entries(0)->set_benchmark("copy");
  s = ingest_->PutCalibration(Context().get(), bad_key, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("entries[0].benchmark"), std::string::npos) << s.error_message();

  s = ingest_->PutCalibration(Context("guess").get(), Calibration(0.01), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(ServiceTest, AStoredCalibrationIsListedWithTheCoordinatorsClock) {
  OpenRun();
  v1::PutCalibrationResponse put;
  grpc::Status s = ingest_->PutCalibration(Context().get(), Calibration(0.0125), &put);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(put.stored(), 1u);

  v1::ListCalibrationsRequest req;
  req.set_sku("cpu-amd-epyc");
  v1::ListCalibrationsResponse list;
  s = query_->ListCalibrations(Context().get(), req, &list);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(list.calibrations_size(), 1);
  const v1::StoredCalibration& c = list.calibrations(0);
  EXPECT_EQ(c.node(), "node-1");
  EXPECT_EQ(c.environment_hash(), wire::FromProto(Calibration(0.0125).environment()).Hash());
  EXPECT_EQ(c.entry().benchmark(), "kernels/copy{bytes=1024}");
  EXPECT_EQ(c.entry().spread(), 0.0125);
  EXPECT_EQ(c.entry().processes(), 10u);
  EXPECT_GE(list.now().seconds(), c.measured_at().seconds());

  req.set_node("node-2");
  v1::ListCalibrationsResponse other;
  s = query_->ListCalibrations(Context().get(), req, &other);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(other.calibrations_size(), 0);
}

}  // namespace
}  // namespace perfgate::coordinator
