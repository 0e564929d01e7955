// Two coordinator processes on one PostgreSQL database, reached by clients
// through one address list ("IP:PORT,IP:PORT", gRPC's round-robin): real
// agents' runs land exactly once when the replica holding their streams is
// killed mid-run; a step seen by both replicas' regression watchers is one
// regression row; each vanished run is expired once, by one replica.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <pqxx/pqxx>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "client/coordinator_client.h"
#include "client/upload.h"
#include "common/exit_codes.h"
#include "common/identity.h"
#include "tests/e2e/dashboard_seed.h"
#include "tests/e2e/stored_runs.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::replicas_e2e_test {
namespace {

using testing::Bin;
using testing::ChildProcess;
using Clock = std::chrono::steady_clock;

constexpr char kToken[] = "replicas-token";
constexpr int kAgents = 3;

// Four small cases of a fraction of a second each: a kill lands mid-run.
const std::vector<std::string> kCases = {"--filter", "kernels/copy*", "--set", "bytes=65536,262144,1048576,4194304",
                                         "--min-time", "0.3", "--timeout", "0.8"};

class ReplicasTest : public testing::PostgresDirTest {
 protected:
  void SetUp() override {
    testing::PostgresDirTest::SetUp();
    if (HasFatalFailure()) return;
    token_file_ = WriteTokenFile(kToken);
  }

  // Starts both replicas with `extra` serve options.
  void StartReplicas(const std::vector<std::string>& extra = {}) {
    for (int i = 0; i < 2; ++i) {
      auto started = testing::StartDashboardCoordinator(
          ConnInfo(), dir_->Join("replica-" + std::to_string(i) + ".log"), token_file_, extra);
      ASSERT_TRUE(started.ok()) << started.status();
      replicas_[i] = std::move(*started);
    }
  }

  // The address list a client is given: both replicas.
  std::string Both() const { return replicas_[0].grpc.address + "," + replicas_[1].grpc.address; }

  // A counter of replica i's /metrics (-1 when it does not answer).
  int64_t Metric(int i, const std::string& name) {
    httplib::Client http("127.0.0.1", replicas_[i].http_port);
    http.set_bearer_token_auth(kToken);
    auto res = http.Get("/metrics");
    if (!res || res->status != 200) return -1;
    std::smatch m;
    if (!std::regex_search(res->body, m, std::regex("\n" + name + " (\\d+)\n"))) return -1;
    return std::stoll(m[1]);
  }

  std::string Logs() {
    return "\n--- replica 0 ---\n" + replicas_[0].grpc.process->OutputTail() + "\n--- replica 1 ---\n" +
           replicas_[1].grpc.process->OutputTail();
  }

  std::string token_file_;
  testing::DashboardCoordinator replicas_[2];
};

// `perfgate-agent run` with both replicas' addresses, its files in dir/agent-<i>.
std::unique_ptr<ChildProcess> StartAgent(const testing::TempDir& dir, int i, const std::string& coordinators,
                                         const std::string& token_file) {
  const std::string own = dir.Join("agent-" + std::to_string(i));
  std::vector<std::string> argv = {Bin("agent/perfgate-agent"), "run", "--coordinator", coordinators,
                                   "--token-file", token_file, "--agent-name", "agent-" + std::to_string(i),
                                   "--branch", "main", "--commit", "c0ffee", "--trigger", "ci",
                                   "--output", own + "-results.json", "--run-id-file", own + "-run-id",
                                   "--spool", own + "-spool", "--rpc-timeout", "10", "--reconnect-for", "120"};
  argv.insert(argv.end(), kCases.begin(), kCases.end());
  auto agent = ChildProcess::Start(argv, own + ".log");
  EXPECT_TRUE(agent.ok()) << agent.status();
  return agent.ok() ? std::move(*agent) : nullptr;
}

// The run of agent i in the database holds exactly what its result file holds.
void ExpectStoredExactly(const testing::TempDir& dir, int i, const std::string& conninfo) {
  const std::string own = dir.Join("agent-" + std::to_string(i));
  auto id = testing::ReadFile(own + "-run-id");
  ASSERT_TRUE(id.ok()) << id.status();
  pqxx::connection c(conninfo);
  pqxx::read_transaction txn(c);
  testing::ExpectRunStoredAsFiled(txn, id->substr(0, 36), own + "-results.json");
}

TEST_F(ReplicasTest, EveryRunLandsOnceWhenTheReplicaHoldingItsStreamIsKilledMidRun) {
  ASSERT_NO_FATAL_FAILURE(StartReplicas());
  std::vector<std::unique_ptr<ChildProcess>> agents;
  for (int i = 0; i < kAgents; ++i) agents.push_back(StartAgent(*dir_, i, Both(), token_file_));
  for (const auto& a : agents) ASSERT_NE(a, nullptr);
  ASSERT_TRUE(agents[0]->WaitForLine(" samples, ", std::chrono::seconds(60))) << agents[0]->OutputTail();
  // The replica that stored a batch first holds a stream of a run with cases to go.
  int victim = -1;
  for (const auto deadline = Clock::now() + std::chrono::seconds(60); victim < 0 && Clock::now() < deadline;) {
    for (int i = 0; i < 2 && victim < 0; ++i) {
      if (Metric(i, "perfgate_ingest_batches_total") > 0) victim = i;
    }
    if (victim < 0) agents[0]->Wait(std::chrono::milliseconds(20));
  }
  ASSERT_GE(victim, 0) << "no replica stored a batch" << Logs();
  replicas_[victim].grpc.process->Stop(SIGKILL, std::chrono::seconds(5));
  const int survivor = 1 - victim;
  for (int i = 0; i < kAgents; ++i) {
    auto code = agents[i]->Wait(std::chrono::minutes(3));
    ASSERT_TRUE(code.has_value()) << agents[i]->OutputTail();
    EXPECT_EQ(*code, 0) << agents[i]->OutputTail() << Logs();
    ExpectStoredExactly(*dir_, i, ConnInfo());
  }
  // The survivor took what the killed replica did not finish.
  EXPECT_GT(Metric(survivor, "perfgate_ingest_batches_total"), 0) << Logs();
  pqxx::connection c(ConnInfo());
  pqxx::read_transaction txn(c);
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM runs WHERE status = 'complete'")[0].as<int>(), kAgents);
}

// Sends a run of main with one case of 30 samples around `level` (1 % noise) and closes it.
void SendRun(client::CoordinatorClient& client, const std::string& commit, double level, std::mt19937_64& rng) {
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = "agent-1";
  meta.environment.sku = testing::kSku;
  meta.branch = "main";
  meta.commit = commit;
  meta.trigger = Trigger::kCi;
  meta.node = "node-1";
  meta.started_at = std::chrono::system_clock::now();
  CaseResult c;
  c.benchmark = *ParseBenchmarkKey(testing::kStepCase);
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  std::normal_distribution<double> noise(0.0, 0.01);
  for (uint32_t i = 0; i < 30; ++i) c.samples.push_back({i, {level * (1.0 + noise(rng))}, false});
  c.status = CaseStatus::kOk;
  auto upload = client::RunUpload::Create(client, meta);
  ASSERT_TRUE(upload.ok()) << upload.status();
  ASSERT_TRUE(upload->Register(meta.node, "test").ok());
  auto stored = upload->SendWhole({c});
  ASSERT_TRUE(stored.ok()) << stored.status();
}

TEST_F(ReplicasTest, AStepSeenByBothReplicasIsOneRegression) {
  ASSERT_NO_FATAL_FAILURE(StartReplicas());
  // The runs alternate between the replicas, and each checks the runs it
  // closed: both see the step, 8 % from the 15th run on.
  std::vector<std::unique_ptr<client::CoordinatorClient>> clients;
  for (int i = 0; i < 2; ++i) {
    auto options = client::MakeClientOptions(replicas_[i].grpc.address, token_file_, 30);
    ASSERT_TRUE(options.ok()) << options.status();
    clients.push_back(std::make_unique<client::CoordinatorClient>(*options));
  }
  constexpr int kRuns = 30, kStep = 15;
  std::mt19937_64 rng(29);
  for (int i = 0; i < kRuns; ++i) {
    ASSERT_NO_FATAL_FAILURE(SendRun(*clients[i % 2], "c" + std::to_string(100 + i), i >= kStep ? 2.7 : 2.5, rng));
  }
  int64_t checks[2] = {0, 0};
  for (const auto deadline = Clock::now() + std::chrono::seconds(60);
       checks[0] + checks[1] < kRuns && Clock::now() < deadline;) {
    for (int i = 0; i < 2; ++i) checks[i] = Metric(i, "perfgate_regression_checks_total");
    if (checks[0] + checks[1] < kRuns) replicas_[0].grpc.process->Wait(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(checks[0], kRuns / 2) << Logs();
  ASSERT_EQ(checks[1], kRuns / 2) << Logs();
  pqxx::connection c(ConnInfo());
  pqxx::read_transaction txn(c);
  const pqxx::result rows = txn.exec("SELECT bad_commit FROM regressions");
  ASSERT_EQ(rows.size(), 1u) << Logs();
  EXPECT_EQ(rows[0][0].as<std::string>(), "c" + std::to_string(100 + kStep));
  EXPECT_EQ(Metric(0, "perfgate_regressions_detected_total") + Metric(1, "perfgate_regressions_detected_total"), 1);
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM regression_events")[0].as<int>(), 1);
}

// A run opened with one case sent and then left: its agent vanished.
std::string LeaveARun(client::CoordinatorClient& client, int i) {
  RunMeta meta;
  meta.run_id = NewUuid();
  meta.agent_name = "vanishing-" + std::to_string(i);
  meta.environment.sku = testing::kSku;
  meta.branch = "main";
  meta.commit = "c" + std::to_string(i);
  meta.trigger = Trigger::kCi;
  meta.node = meta.agent_name;
  meta.started_at = std::chrono::system_clock::now();
  CaseResult c;
  c.benchmark = *ParseBenchmarkKey(testing::kFlatCase);
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  for (uint32_t s = 0; s < 10; ++s) c.samples.push_back({s, {1.0 + s * 0.01}, false});
  c.status = CaseStatus::kOk;
  auto upload = client::RunUpload::Create(client, meta);
  EXPECT_TRUE(upload.ok()) << upload.status();
  if (!upload.ok()) return "";
  EXPECT_TRUE(upload->Register(meta.node, "test").ok());
  EXPECT_TRUE(upload->Open().ok());
  EXPECT_TRUE(upload->Send(c).ok());
  return meta.run_id;
}

TEST_F(ReplicasTest, EachVanishedRunIsExpiredOnceByOneReplica) {
  // Both replicas look for silent runs four times a second.
  ASSERT_NO_FATAL_FAILURE(StartReplicas({"--expire-runs-after", "1"}));
  auto options = client::MakeClientOptions(Both(), token_file_, 30);
  ASSERT_TRUE(options.ok()) << options.status();
  client::CoordinatorClient client(*options);
  constexpr int kRuns = 8;
  for (int i = 0; i < kRuns; ++i) ASSERT_FALSE(LeaveARun(client, i).empty());
  pqxx::connection c(ConnInfo());
  int running = kRuns;
  for (const auto deadline = Clock::now() + std::chrono::seconds(60); running > 0 && Clock::now() < deadline;) {
    pqxx::read_transaction txn(c);
    running = txn.exec1("SELECT count(*) FROM runs WHERE status = 'running'")[0].as<int>();
    if (running > 0) replicas_[0].grpc.process->WaitForLine("expired as failed", std::chrono::milliseconds(200));
  }
  ASSERT_EQ(running, 0) << Logs();
  const int64_t counted = Metric(0, "perfgate_runs_expired_total") + Metric(1, "perfgate_runs_expired_total");
  // A stop waits for an expiry under way: whatever either replica was doing is in its log.
  for (auto& r : replicas_) EXPECT_EQ(r.grpc.process->Kill(), 0);
  EXPECT_EQ(counted, kRuns);
  int logged = 0;
  for (auto& r : replicas_) {
    const std::string out = r.grpc.process->Output();
    for (size_t at = out.find("expired as failed"); at != std::string::npos; at = out.find("expired as failed", at + 1)) {
      ++logged;
    }
  }
  EXPECT_EQ(logged, kRuns) << Logs();
  pqxx::read_transaction txn(c);
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM runs WHERE status = 'failed' AND failure_reason LIKE 'expired%'")[0]
                .as<int>(),
            kRuns);
}

TEST_F(ReplicasTest, AnAddressListNamingAHostIsRefusedWithTheWayToWriteIt) {
  auto bad = client::CheckCoordinatorAddress("coordinator-a:50051,coordinator-b:50051");
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("dns:///"), std::string::npos) << bad.message();
  EXPECT_TRUE(client::CheckCoordinatorAddress("127.0.0.1:1,[::1]:2").ok());
  EXPECT_TRUE(client::CheckCoordinatorAddress("dns:///coordinator.example:50051").ok());
  auto agent = testing::RunCommand({Bin("agent/perfgate-agent"), "run", "--coordinator", "a:1,b:2", "--filter",
                                    "kernels/copy*", "--branch", "main", "--commit", "c0ffee"});
  ASSERT_TRUE(agent.ok()) << agent.status();
  EXPECT_EQ(agent->exit_code, kExitError);
  EXPECT_NE(agent->output.find("is not an IP address and port"), std::string::npos) << agent->output;
}

}  // namespace
}  // namespace perfgate::replicas_e2e_test
