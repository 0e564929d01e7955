// A run's upload (client/upload.h) against the coordinator's services over
// real gRPC on loopback, in process, with a private PostgreSQL: a refused
// batch ends the run as failed with every batch kept in the spool; an
// outage is retried with back-off and the run sent when the coordinator is
// back; a close that times out costs nothing; an unreachable coordinator
// leaves the run in the spool, and replay sends it once one listens.
#include "client/upload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <unistd.h>

#include <atomic>
#include <future>
#include <limits>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/identity.h"
#include "coordinator/domain/credentials.h"
#include "coordinator/api/server.h"
#include "tests/coordinator/migrated_store_test.h"
#include "tests/support/processes.h"
#include "wire/validate.h"

namespace perfgate::client::upload_test {
namespace {

RunMeta Meta() {
  RunMeta m;
  m.run_id = NewUuid();
  m.agent_name = "node-1";
  m.node = "node-1";
  m.environment = {"cpu-amd-epyc", {{"cpu_model", "AMD EPYC"}}};
  m.branch = "main";
  m.commit = "abc";
  m.started_at = std::chrono::system_clock::now();
  return m;
}

CaseResult Case(const std::string& bytes, std::vector<double> times) {
  CaseResult c;
  c.benchmark = {"kernels", "copy", {{"bytes", bytes}}};
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  for (size_t i = 0; i < times.size(); ++i) c.samples.push_back({static_cast<uint32_t>(i), {times[i]}, false});
  c.status = CaseStatus::kOk;
  return c;
}

class UploadTest : public coordinator::MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    auto dir = testing::TempDir::Create("perfgate-upload-");
    ASSERT_TRUE(dir.ok()) << dir.status();
    dir_ = std::make_unique<testing::TempDir>(std::move(*dir));
  }

  void StartServer(int port = 0, coordinator::AuthConfig auth = {}) {
    coordinator::ServerConfig config;
    config.listen = "127.0.0.1:" + std::to_string(port);
    config.auth = auth;
    auto server = coordinator::Server::Start(config, *store_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  static ClientOptions Options(int port) {
    ClientOptions o;
    o.address = "127.0.0.1:" + std::to_string(port);
    o.timeout_s = 2;
    o.attempts = 2;
    return o;
  }

  v1::RunDetail GetRun(CoordinatorClient& client, const std::string& run_id) {
    auto run = client.GetRun(run_id);
    EXPECT_TRUE(run.ok()) << run.status();
    return run.ok() ? *run : v1::RunDetail();
  }

  // `cases` sent whole as the run `meta` to the started server: the samples stored.
  absl::StatusOr<uint64_t> SendWhole(const RunMeta& meta, const std::vector<CaseResult>& cases) {
    CoordinatorClient client(Options(server_->port()));
    auto upload = RunUpload::Create(client, meta);
    if (!upload.ok()) return upload.status();
    if (absl::Status s = upload->Register("node-1", "test"); !s.ok()) return s;
    return upload->SendWhole(cases);
  }

  // The samples of each stored batch of a run, in sequence order.
  std::vector<size_t> BatchSampleCounts(const std::string& run_id) {
    pqxx::connection c(ConnInfo());
    pqxx::nontransaction t(c);
    std::vector<size_t> counts;
    for (const auto& row :
         t.exec_params("SELECT sample_count FROM batches WHERE run_id = $1 ORDER BY sequence", run_id)) {
      counts.push_back(row[0].as<size_t>());
    }
    return counts;
  }

  std::unique_ptr<testing::TempDir> dir_;
  std::unique_ptr<coordinator::Server> server_;
};

TEST_F(UploadTest, ARunSentWholeIsStoredComplete) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  CoordinatorClient client(Options(server_->port()));
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta);
  ASSERT_TRUE(upload.ok()) << upload.status();
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  auto stored = upload->SendWhole({Case("1024", {1.0, 1.1}), Case("2048", {2.0, 2.1, 2.2})});
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, 5u);
  EXPECT_EQ(GetRun(client, meta.run_id).run().status(), v1::RUN_COMPLETE);
}

TEST_F(UploadTest, ARunSentWholePutsManyCasesInABatchAndSplitsAtTheValueLimit) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const RunMeta meta = Meta();
  // 40 small cases, then three holding 3/5, 1/5 and 3/5 of a batch's
  // values. The first batch (a quarter of the others, without a spool)
  // takes the small ones; the second the first large one and the 1/5,
  // the third the last one.
  const size_t big = RunUpload::kBatchValues * 3 / 5, fifth = RunUpload::kBatchValues / 5;
  std::vector<CaseResult> cases;
  for (int i = 0; i < 40; ++i) cases.push_back(Case(std::to_string(i), {1.0, 1.1}));
  cases.push_back(Case("big1", std::vector<double>(big, 2.0)));
  cases.push_back(Case("fifth", std::vector<double>(fifth, 2.5)));
  cases.push_back(Case("big2", std::vector<double>(big, 3.0)));
  auto stored = SendWhole(meta, cases);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, 80 + 2 * big + fifth);
  EXPECT_EQ(BatchSampleCounts(meta.run_id), (std::vector<size_t>{80, big + fifth, big}));
  auto samples = store_->GetSamples(meta.run_id);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), 43u);
}

TEST_F(UploadTest, ABatchRefusedWhileTheNextWasWrittenAheadEndsTheUploadWithTheCoordinatorsAnswer) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const RunMeta meta = Meta();
  // Batch 1: case "x". Batch 2: "y" and "x" again, its indexes stored
  // already, which the coordinator refuses. Batch 3, "z", is written
  // while batch 2 is being refused, and never stored.
  const size_t quarter = RunUpload::kBatchValues / 4;
  std::vector<CaseResult> cases = {Case("x", std::vector<double>(quarter + 1, 1.0)),
                                   Case("y", std::vector<double>(quarter * 3, 2.0)), Case("x", {1.0, 1.0}),
                                   Case("z", std::vector<double>(quarter, 3.0))};
  auto stored = SendWhole(meta, cases);
  EXPECT_EQ(stored.status().code(), absl::StatusCode::kInvalidArgument) << stored.status();
  EXPECT_THAT(std::string(stored.status().message()), ::testing::HasSubstr("sample index 0 is stored"));
  EXPECT_EQ(BatchSampleCounts(meta.run_id), (std::vector<size_t>{quarter + 1}));
}

TEST_F(UploadTest, ARunSentWholeOfManySmallCasesSplitsAtTheCaseLimitOfABatch) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const RunMeta meta = Meta();
  std::vector<CaseResult> cases;
  for (size_t i = 0; i < wire::kMaxCasesPerBatch + 10; ++i) cases.push_back(Case(std::to_string(i), {1.0}));
  auto stored = SendWhole(meta, cases);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, wire::kMaxCasesPerBatch + 10);
  EXPECT_EQ(BatchSampleCounts(meta.run_id), (std::vector<size_t>{wire::kMaxCasesPerBatch, 10}));
}

TEST_F(UploadTest, ARefusedBatchEndsTheRunAsFailedAndKeepsEveryBatchInTheSpool) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  CoordinatorClient client(Options(server_->port()));
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta, dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  ASSERT_TRUE(upload->Open().ok());
  ASSERT_TRUE(upload->Send(Case("1024", {1.0})).ok());
  // Refused by the coordinator: within one run a metric keeps one unit.
  CaseResult other_unit = Case("1024", {2.0});
  other_unit.samples[0].index = 1;
  other_unit.metrics[0].unit = "us";
  EXPECT_TRUE(upload->Send(other_unit).ok());
  // Measuring goes on; nothing more is sent, everything is spooled.
  EXPECT_TRUE(upload->Send(Case("2048", {3.0, 3.1})).ok());
  auto closed = upload->Close({});
  EXPECT_EQ(closed.status().code(), absl::StatusCode::kInvalidArgument) << closed.status();
  EXPECT_THAT(std::string(closed.status().message()), ::testing::HasSubstr("every batch is kept in"));
  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kFailed);
  EXPECT_THAT(run->failure_reason, ::testing::HasSubstr("one run reports a metric in one unit"));
  // Batches 2 and 3 (never stored) are in the spool, with the failed close.
  const std::string run_dir = upload->spool_path();
  upload = absl::FailedPreconditionError("released");
  auto spooled = SpooledRun::Open(run_dir);
  ASSERT_TRUE(spooled.ok()) << spooled.status();
  auto pending = spooled->ReadPending();
  ASSERT_TRUE(pending.ok());
  EXPECT_EQ(pending->size(), 2u);
  auto close = spooled->ReadClose();
  ASSERT_TRUE(close.ok() && close->has_value());
  EXPECT_EQ((*close)->status(), v1::RUN_FAILED);
}

TEST_F(UploadTest, AnOutageMidRunEndsWithTheRunStoredWithoutReplay) {
  auto port = testing::FreeTcpPort();
  ASSERT_TRUE(port.ok());
  CoordinatorClient client(Options(*port));  // nothing listens there yet
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta, dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
  int online_calls = 0;
  upload->OnOnline([&] { ++online_calls; });
  upload->SetReconnectWindow(60);
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  ASSERT_TRUE(upload->Open().ok());
  ASSERT_TRUE(upload->Send(Case("1024", {1.0, 1.5})).ok());
  EXPECT_FALSE(upload->online());
  ASSERT_NO_FATAL_FAILURE(StartServer(*port));
  ASSERT_TRUE(upload->Send(Case("2048", {2.0})).ok());
  // Close retries with back-off until the coordinator answers.
  auto closed = upload->Close({});
  ASSERT_TRUE(closed.ok()) << closed.status();
  ASSERT_TRUE(closed->has_value());
  EXPECT_EQ(**closed, 3u);
  EXPECT_EQ(online_calls, 1);
  EXPECT_EQ(GetRun(client, meta.run_id).run().status(), v1::RUN_COMPLETE);
  auto spooled = ListSpool(dir_->Join("spool"));
  ASSERT_TRUE(spooled.ok());
  EXPECT_TRUE(spooled->empty());
}

TEST_F(UploadTest, ACloseThatTimesOutIsRetriedAndCostsNothing) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  CoordinatorClient client(Options(server_->port()));
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta, dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
  std::atomic<int> offline_calls{0};
  upload->OnOffline([&](const absl::Status&) { ++offline_calls; });
  upload->SetReconnectWindow(60);
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  ASSERT_TRUE(upload->Open().ok());
  ASSERT_TRUE(upload->Send(Case("1024", {1.0, 1.5})).ok());
  // The run's row is held, so the close outlasts the client's 2 s deadline.
  pqxx::connection holder(ConnInfo());
  auto hold = std::make_unique<pqxx::work>(holder);
  hold->exec_params("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", meta.run_id);
  auto closing = std::async(std::launch::async, [&] { return upload->Close({}); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (offline_calls == 0 && std::chrono::steady_clock::now() < deadline) {
    closing.wait_for(std::chrono::milliseconds(50));  // polls the callback's count
  }
  EXPECT_EQ(offline_calls, 1);
  hold->commit();
  auto closed = closing.get();
  ASSERT_TRUE(closed.ok()) << closed.status();
  ASSERT_TRUE(closed->has_value());
  EXPECT_EQ(**closed, 2u);
  EXPECT_EQ(GetRun(client, meta.run_id).run().status(), v1::RUN_COMPLETE);
}

TEST_F(UploadTest, ASpoolMissingABatchIsReplayedAndClosedAsFailedWithWhatItHas) {
  auto port = testing::FreeTcpPort();
  ASSERT_TRUE(port.ok());
  CoordinatorClient client(Options(*port));
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta, dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
  upload->SetReconnectWindow(0);
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  ASSERT_TRUE(upload->Open().ok());
  for (const char* bytes : {"1", "2", "3"}) ASSERT_TRUE(upload->Send(Case(bytes, {1.0})).ok());
  auto closed = upload->Close({});
  ASSERT_TRUE(closed.ok() && !closed->has_value());
  ASSERT_TRUE(upload->KeepInSpool().ok());
  const std::string run_dir = upload->spool_path();
  upload = absl::FailedPreconditionError("released");
  // Batch 2 was corrupt and deleted, as the DATA_LOSS message advises.
  ASSERT_EQ(unlink((run_dir + "/batch-2.pb").c_str()), 0);
  ASSERT_NO_FATAL_FAILURE(StartServer(*port));
  auto replayed = RunUpload::Replay(client, run_dir, "node-1", "test");
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(replayed->samples_stored, 2u);
  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kFailed);
  EXPECT_THAT(run->failure_reason, ::testing::HasSubstr("batch 2 of 3"));
}

TEST_F(UploadTest, AnUnreachableCoordinatorLeavesTheRunInTheSpoolAndReplaySendsIt) {
  auto port = testing::FreeTcpPort();
  ASSERT_TRUE(port.ok());
  CoordinatorClient client(Options(*port));  // nothing listens there yet
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta, dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
  upload->SetReconnectWindow(0);
  int offline_calls = 0;
  upload->OnOffline([&](const absl::Status& s) {
    ++offline_calls;
    EXPECT_TRUE(Unreachable(s)) << s;
  });
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  EXPECT_FALSE(upload->online());
  ASSERT_TRUE(upload->Open().ok());
  ASSERT_TRUE(upload->Send(Case("1024", {1.0, 1.5})).ok());
  ASSERT_TRUE(upload->Send(Case("2048", {2.0})).ok());
  auto closed = upload->Close({"a PCIe link below its maximum"});
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_FALSE(closed->has_value());
  ASSERT_TRUE(upload->KeepInSpool().ok());
  EXPECT_EQ(offline_calls, 1);
  const std::string run_dir = upload->spool_path();
  EXPECT_EQ(run_dir, dir_->Join("spool") + "/" + meta.run_id);

  // A held run is not replayed: its agent may still be measuring.
  EXPECT_EQ(RunUpload::Replay(client, run_dir, "node-1", "test").status().code(),
            absl::StatusCode::kFailedPrecondition);
  upload = absl::FailedPreconditionError("released");  // drops the lock

  ASSERT_NO_FATAL_FAILURE(StartServer(*port));
  auto replayed = RunUpload::Replay(client, run_dir, "node-1", "test");
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(replayed->run_id, meta.run_id);
  EXPECT_FALSE(replayed->already_stored);
  EXPECT_EQ(replayed->batches, 2u);
  EXPECT_EQ(replayed->samples_stored, 3u);
  const v1::RunDetail run = GetRun(client, meta.run_id);
  EXPECT_EQ(run.run().status(), v1::RUN_COMPLETE);
  ASSERT_EQ(run.run().invalid_reasons_size(), 1);
  EXPECT_EQ(run.run().invalid_reasons(0), "a PCIe link below its maximum");
  auto spooled = ListSpool(dir_->Join("spool"));
  ASSERT_TRUE(spooled.ok());
  EXPECT_TRUE(spooled->empty());
}

// While the coordinator is away, the agent measures between calls: with a
// 30 s call timeout, registering, opening, sending and a later retry each
// cost at most a short look at the connection (about a second), and once
// the coordinator is there the run is stored whole.
TEST_F(UploadTest, AnAbsentCoordinatorCostsEachAttemptASecondNotTheCallTimeout) {
  auto port = testing::FreeTcpPort();
  ASSERT_TRUE(port.ok());
  ClientOptions o = Options(*port);  // nothing listens there yet
  o.timeout_s = 30;
  o.attempts = 5;
  CoordinatorClient client(o);
  auto upload = RunUpload::Create(client, Meta(), dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  const Clock::time_point start = Clock::now();
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  ASSERT_TRUE(upload->Open().ok());
  ASSERT_TRUE(upload->Send(Case("1024", {1.0, 1.5})).ok());
  EXPECT_LT(seconds_since(start), 10) << "the first attempts waited for the call timeout";
  EXPECT_FALSE(upload->online());
  // A case measured for longer than the first back-off (0.5 s): the next
  // send looks for the coordinator again, briefly.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const Clock::time_point retry = Clock::now();
  ASSERT_TRUE(upload->Send(Case("2048", {2.0})).ok());
  EXPECT_LT(seconds_since(retry), 10) << "a retry waited for the call timeout";
  EXPECT_FALSE(upload->online());

  ASSERT_NO_FATAL_FAILURE(StartServer(*port));
  auto closed = upload->Close({});
  ASSERT_TRUE(closed.ok()) << closed.status();
  ASSERT_TRUE(closed->has_value());
  EXPECT_EQ(**closed, 3u);
}

// A credential revoked while its run streams: the coordinator stores no
// batch after the revocation, the agent neither says nor records that the
// run was closed as failed (its close would be refused too), the run stays
// open, and `replay` with a new credential completes it with every sample.
TEST_F(UploadTest, ACredentialRevokedMidRunStopsStoringAndReplayWithANewOneCompletesTheRun) {
  coordinator::AuthConfig auth;
  auth.require_credentials = true;
  ASSERT_NO_FATAL_FAILURE(StartServer(0, auth));
  auto issued = coordinator::IssueCredential(*store_, "node-1", coordinator::Role::kAgent);
  ASSERT_TRUE(issued.ok()) << issued.status();
  ClientOptions o = Options(server_->port());
  o.token = issued->token;
  CoordinatorClient client(o);
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta, dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
  upload->SetReconnectWindow(0);
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  ASSERT_TRUE(upload->Open().ok());
  ASSERT_TRUE(upload->Send(Case("1024", {1.0, 1.5})).ok());
  ASSERT_TRUE(upload->online());

  ASSERT_TRUE(coordinator::RevokeCredential(*store_, "node-1").ok());
  ASSERT_TRUE(upload->Send(Case("2048", {2.0})).ok());  // refused; kept in the spool
  ASSERT_TRUE(upload->Send(Case("4096", {4.0})).ok());
  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->samples, 2u) << "a batch was stored after the credential was revoked";
  auto closed = upload->Close({});
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.status().code(), absl::StatusCode::kUnauthenticated) << closed.status();
  EXPECT_THAT(std::string(closed.status().message()), ::testing::HasSubstr("left open on the coordinator"));
  EXPECT_THAT(std::string(closed.status().message()), ::testing::Not(::testing::HasSubstr("closed as failed")));
  run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kRunning);
  const std::string run_dir = upload->spool_path();
  upload = absl::FailedPreconditionError("released");  // drops the spool's lock

  auto renewed = coordinator::IssueCredential(*store_, "node-1", coordinator::Role::kAgent);
  ASSERT_TRUE(renewed.ok()) << renewed.status();
  o.token = renewed->token;
  CoordinatorClient again(o);
  auto replayed = RunUpload::Replay(again, run_dir, "node-1", "test");
  ASSERT_TRUE(replayed.ok()) << replayed.status();
  EXPECT_EQ(replayed->batches, 2u);
  run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kComplete) << run->failure_reason;
  EXPECT_EQ(run->samples, 4u);
}

}  // namespace
}  // namespace perfgate::client::upload_test
