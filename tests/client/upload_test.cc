// A run's upload (client/upload.h) against the coordinator's services over
// real gRPC on loopback, in process, with a private PostgreSQL: a refused
// batch closes the run as failed; an unreachable coordinator leaves the run
// in the spool, and replay sends it once one listens.
#include "client/upload.h"

#include <gtest/gtest.h>

#include <limits>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "common/identity.h"
#include "coordinator/server.h"
#include "tests/coordinator/migrated_store_test.h"
#include "tests/support/processes.h"

namespace perfgate::client {
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

  void StartServer(int port = 0) {
    coordinator::ServerConfig config;
    config.listen = "127.0.0.1:" + std::to_string(port);
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
  CoordinatorClient client(Options(server_->port()));
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta);
  ASSERT_TRUE(upload.ok()) << upload.status();
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  // 40 small cases, then two of 40 000 values: the small ones and the
  // first large one fit one batch of 65 536 values, the second its own.
  std::vector<CaseResult> cases;
  for (int i = 0; i < 40; ++i) cases.push_back(Case(std::to_string(i), {1.0, 1.1}));
  cases.push_back(Case("big1", std::vector<double>(40000, 2.0)));
  cases.push_back(Case("big2", std::vector<double>(40000, 3.0)));
  auto stored = upload->SendWhole(cases);
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_EQ(*stored, 80080u);
  pqxx::connection c(ConnInfo());
  pqxx::nontransaction t(c);
  const pqxx::result batches = t.exec_params(
      "SELECT sample_count FROM batches WHERE run_id = $1 ORDER BY sequence", meta.run_id);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0][0].as<int64_t>(), 40080);
  EXPECT_EQ(batches[1][0].as<int64_t>(), 40000);
  auto samples = store_->GetSamples(meta.run_id);
  ASSERT_TRUE(samples.ok()) << samples.status();
  EXPECT_EQ(samples->size(), 42u);
}

TEST_F(UploadTest, ARefusedBatchClosesTheRunAsFailedAndRemovesTheSpool) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  CoordinatorClient client(Options(server_->port()));
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta, dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
  ASSERT_TRUE(upload->Register("node-1", "test").ok());
  ASSERT_TRUE(upload->Open().ok());
  ASSERT_TRUE(upload->Send(Case("1024", {1.0})).ok());
  absl::Status refused = upload->Send(Case("2048", {std::numeric_limits<double>::quiet_NaN()}));
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument) << refused;
  EXPECT_TRUE(upload->online());
  const v1::RunDetail run = GetRun(client, meta.run_id);
  EXPECT_EQ(run.run().status(), v1::RUN_FAILED);
  auto spooled = ListSpool(dir_->Join("spool"));
  ASSERT_TRUE(spooled.ok());
  EXPECT_TRUE(spooled->empty());
}

TEST_F(UploadTest, AnUnreachableCoordinatorLeavesTheRunInTheSpoolAndReplaySendsIt) {
  auto port = testing::FreeTcpPort();
  ASSERT_TRUE(port.ok());
  CoordinatorClient client(Options(*port));  // nothing listens there yet
  const RunMeta meta = Meta();
  auto upload = RunUpload::Create(client, meta, dir_->Join("spool"));
  ASSERT_TRUE(upload.ok()) << upload.status();
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

}  // namespace
}  // namespace perfgate::client
