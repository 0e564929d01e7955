// Strict ingest over real gRPC on loopback, in process, against a private
// PostgreSQL: what the coordinator refuses and what it no longer lets one
// writer do to another's runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <pqxx/pqxx>
#include <string>
#include <thread>
#include <vector>

#include "common/identity.h"
#include "coordinator/api/server.h"
#include "coordinator/store.h"
#include "tests/coordinator/migrated_store_test.h"
#include "wire/convert.h"

namespace perfgate::coordinator {
namespace {

using ::testing::HasSubstr;

CaseResult Case(std::vector<uint32_t> indices, const std::string& unit = "ms", double value = 1.0) {
  CaseResult c;
  c.benchmark = {"kernels", "copy", {{"bytes", "3145728"}}};
  c.metrics = {{"time", unit, Direction::kLowerIsBetter}};
  for (uint32_t i : indices) c.samples.push_back({i, {value + i}, false});
  return c;
}

class StrictIngestTest : public MigratedStoreTest {
 protected:
  void SetUp() override {
    MigratedStoreTest::SetUp();
    if (HasFatalFailure()) return;
    ServerConfig config;
    config.listen = "127.0.0.1:0";
    auto server = Server::Start(config, *store_);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ingest_ = v1::Ingest::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(server_->port()),
                                                      grpc::InsecureChannelCredentials()));
    ASSERT_TRUE(store_->RegisterAgent("node-1", "node-1", "test").ok());
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }

  static std::unique_ptr<grpc::ClientContext> Context() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return ctx;
  }

  static RunMeta Meta(const std::string& branch = "main", const std::string& sku = "cpu-amd-epyc") {
    RunMeta meta;
    meta.run_id = NewUuid();
    meta.agent_name = "node-1";
    meta.environment = {sku, {{"cpu_model", "AMD EPYC"}}};
    meta.branch = branch;
    meta.commit = "abc";
    meta.started_at = std::chrono::system_clock::now();
    return meta;
  }

  grpc::Status Open(const RunMeta& meta) {
    v1::OpenRunRequest req;
    wire::ToProto(meta, &req);
    v1::OpenRunResponse resp;
    return ingest_->OpenRun(Context().get(), req, &resp);
  }

  // Sends one batch on its own stream; the ack, or the stream's status.
  grpc::Status Send(const v1::ResultBatch& batch, v1::BatchAck* ack) {
    auto ctx = Context();
    auto stream = ingest_->StreamResults(ctx.get());
    stream->Write(batch);
    stream->WritesDone();
    const bool acked = stream->Read(ack);
    grpc::Status s = stream->Finish();
    if (s.ok() && !acked) return grpc::Status(grpc::StatusCode::UNKNOWN, "the stream ended OK with no ack");
    return s;
  }

  static v1::ResultBatch Batch(const std::string& run_id, uint64_t seq, const CaseResult& c) {
    v1::ResultBatch b;
    b.set_run_id(run_id);
    b.set_sequence(seq);
    wire::ToProto(c, b.add_cases());
    return b;
  }

  grpc::Status Close(const std::string& run_id, v1::RunStatus status, uint64_t last) {
    v1::CloseRunRequest req;
    req.set_run_id(run_id);
    req.set_status(status);
    req.set_last_sequence(last);
    v1::CloseRunResponse resp;
    return ingest_->CloseRun(Context().get(), req, &resp);
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<v1::Ingest::Stub> ingest_;
};

TEST_F(StrictIngestTest, InvalidUtf8IsInvalidArgumentOnUnaryCallsAndOnTheStream) {
  RunMeta meta = Meta();
  meta.branch = "ma\xffin";
  grpc::Status s = Open(meta);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("branch: is not valid UTF-8"));
  meta.branch = std::string("ma\0in", 5);
  s = Open(meta);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("branch: holds a NUL byte"));

  // Too long for an index row: refused by name, not INTERNAL.
  meta.branch = std::string(3000, 'b');
  s = Open(meta);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("branch: is 3000 bytes"));
  meta = Meta();
  meta.started_at = TimePoint(std::chrono::seconds(-5'600'000'000LL));  // the year 1792
  s = Open(meta);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("started_at"));

  meta = Meta();
  ASSERT_TRUE(Open(meta).ok());
  CaseResult c = Case({0});
  c.reason = "bad \xc3";
  v1::BatchAck ack;
  s = Send(Batch(meta.run_id, 1, c), &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("cases[0].reason: is not valid UTF-8"));
}

// Map keys travel as bytes (common.proto's TextEntry): a key that is not
// UTF-8 reaches the coordinator, which refuses it by name, instead of
// failing the parse (an OpenRun was INTERNAL with no message, a stream
// ended OK with no acknowledgement).
TEST_F(StrictIngestTest, AMapKeyThatIsNotUtf8IsInvalidArgumentNamingTheKeyOnUnaryCallsAndOnTheStream) {
  RunMeta meta = Meta();
  meta.details["gpu0.\xff"] = "1";
  grpc::Status s = Open(meta);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr(R"(details key "gpu0.\xff": is not valid UTF-8)"));
  meta = Meta();
  meta.environment.fields["\xfe"] = "x";
  s = Open(meta);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr(R"(environment.fields key "\xfe": is not valid UTF-8)"));

  meta = Meta();
  ASSERT_TRUE(Open(meta).ok());
  CaseResult c = Case({0});
  c.benchmark.params["\xff"] = "1";
  v1::BatchAck ack;
  s = Send(Batch(meta.run_id, 1, c), &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr(R"(batch 1: cases[0].benchmark.params key "\xff": is not valid UTF-8)"));
}

TEST_F(StrictIngestTest, DuplicateIndicesAcrossBatchesAndOtherContentUnderAKnownSequenceAreRefused) {
  const RunMeta meta = Meta();
  ASSERT_TRUE(Open(meta).ok());
  v1::BatchAck ack;
  ASSERT_TRUE(Send(Batch(meta.run_id, 1, Case({0, 1, 2})), &ack).ok());
  EXPECT_FALSE(ack.duplicate());
  // The same batch again: a replay, acknowledged as a duplicate.
  ASSERT_TRUE(Send(Batch(meta.run_id, 1, Case({0, 1, 2})), &ack).ok());
  EXPECT_TRUE(ack.duplicate());
  // Other content under sequence 1: refused, not acknowledged and dropped.
  grpc::Status s = Send(Batch(meta.run_id, 1, Case({0, 1, 2}, "ms", 7.0)), &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("stored with other content"));
  // Index 2 again in batch 2: refused.
  s = Send(Batch(meta.run_id, 2, Case({2, 3})), &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("sample index 2 is stored"));
  ASSERT_TRUE(Send(Batch(meta.run_id, 2, Case({3, 4})), &ack).ok());
  ASSERT_TRUE(Close(meta.run_id, v1::RUN_COMPLETE, 2).ok());
  auto sums = store_->GetSummaries(meta.run_id);
  ASSERT_TRUE(sums.ok());
  ASSERT_EQ(sums->size(), 1u);
  EXPECT_EQ((*sums)[0].n, 5u);
}

TEST_F(StrictIngestTest, CloseRunIsCheckedAgainstWhatIsStored) {
  const RunMeta meta = Meta();
  ASSERT_TRUE(Open(meta).ok());
  // No batch: never complete.
  grpc::Status s = Close(meta.run_id, v1::RUN_COMPLETE, 0);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("no batch"));
  v1::BatchAck ack;
  ASSERT_TRUE(Send(Batch(meta.run_id, 1, Case({0})), &ack).ok());
  ASSERT_TRUE(Send(Batch(meta.run_id, 3, Case({2})), &ack).ok());
  // last_sequence below what is stored.
  s = Close(meta.run_id, v1::RUN_COMPLETE, 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("batches up to 3"));
  // Batch 2 never came: not complete, but failed with what it has.
  EXPECT_EQ(Close(meta.run_id, v1::RUN_COMPLETE, 3).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(Close(meta.run_id, v1::RUN_FAILED, 3).ok());
  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kFailed);
  EXPECT_EQ(run->samples, 2u);
}

TEST_F(StrictIngestTest, ReopeningAnOpenRunAsAnotherRunIsRefused) {
  RunMeta meta = Meta();
  ASSERT_TRUE(Open(meta).ok());
  ASSERT_TRUE(Open(meta).ok());  // a resend
  meta.branch = "evil";
  grpc::Status s = Open(meta);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("another branch"));
  meta.branch = "main";
  meta.environment.sku = "h100-sxm5-80gb";
  EXPECT_EQ(Open(meta).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  auto run = store_->GetRun(meta.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->meta.branch, "main");
  EXPECT_EQ(run->meta.environment.sku, "cpu-amd-epyc");
}

TEST_F(StrictIngestTest, AnotherUnitFromOneRunPoisonsNoOtherRun) {
  // The first writer stores the case's time in us.
  const RunMeta evil = Meta();
  ASSERT_TRUE(Open(evil).ok());
  v1::BatchAck ack;
  ASSERT_TRUE(Send(Batch(evil.run_id, 1, Case({0, 1}, "us", 1000)), &ack).ok());
  ASSERT_TRUE(Close(evil.run_id, v1::RUN_COMPLETE, 1).ok());
  // A real run in ms is stored, whole.
  const RunMeta real = Meta();
  ASSERT_TRUE(Open(real).ok());
  ASSERT_TRUE(Send(Batch(real.run_id, 1, Case({0, 1, 2}, "ms", 1.0)), &ack).ok());
  // Within one run a metric keeps one unit: that run's case is refused.
  grpc::Status s = Send(Batch(real.run_id, 2, Case({3}, "us", 1.0)), &ack);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("one run reports a metric in one unit"));
  ASSERT_TRUE(Close(real.run_id, v1::RUN_COMPLETE, 1).ok());
  auto sums = store_->GetSummaries(real.run_id);
  ASSERT_TRUE(sums.ok());
  ASSERT_EQ(sums->size(), 1u);
  EXPECT_EQ((*sums)[0].unit, "ms");
  EXPECT_EQ((*sums)[0].n, 3u);
  // History follows the definition of the newest complete run.
  auto history = store_->GetHistory("kernels/copy{bytes=3145728}", "time", "", "", 10);
  ASSERT_TRUE(history.ok()) << history.status();
  EXPECT_EQ(history->unit, "ms");
  ASSERT_EQ(history->points.size(), 1u);
  EXPECT_EQ(history->points[0].run_id, real.run_id);
}

TEST_F(StrictIngestTest, RunsWhoseAgentsWentSilentExpireAsFailed) {
  const RunMeta silent = Meta();
  ASSERT_TRUE(Open(silent).ok());
  v1::BatchAck ack;
  ASSERT_TRUE(Send(Batch(silent.run_id, 1, Case({0, 1})), &ack).ok());
  // A long silence allowed: nothing expires.
  auto none = store_->ExpireSilentRuns(3600);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
  auto expired = store_->ExpireSilentRuns(0);
  ASSERT_TRUE(expired.ok()) << expired.status();
  EXPECT_EQ(*expired, std::vector<std::string>{silent.run_id});
  auto run = store_->GetRun(silent.run_id);
  ASSERT_TRUE(run.ok());
  EXPECT_EQ(run->status, RunStatus::kFailed);
  EXPECT_EQ(run->samples, 2u);
}

TEST_F(StrictIngestTest, ACancelledStatementIsUnavailableToRetryNotInternal) {
  const RunMeta meta = Meta();
  ASSERT_TRUE(Open(meta).ok());
  // Hold the run's row so that the close waits, then cancel the waiting
  // statement as statement_timeout would.
  pqxx::connection holder(ConnInfo());
  pqxx::work hold(holder);
  hold.exec_params("SELECT 1 FROM runs WHERE id = $1 FOR UPDATE", meta.run_id);
  std::thread canceller([&] {
    pqxx::connection c(ConnInfo());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      pqxx::nontransaction q(c);
      if (q.exec("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                 "AND wait_event_type = 'Lock' AND query LIKE 'SELECT status FROM runs%FOR UPDATE'")
              .size() > 0) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // polling pg_stat_activity
    }
  });
  auto closed = store_->CloseRun(meta.run_id, RunStatus::kFailed, 0, "", {});
  canceller.join();
  hold.abort();
  EXPECT_EQ(closed.status().code(), absl::StatusCode::kUnavailable) << closed.status();
  EXPECT_THAT(std::string(closed.status().message()), HasSubstr("57014"));
}

}  // namespace
}  // namespace perfgate::coordinator
