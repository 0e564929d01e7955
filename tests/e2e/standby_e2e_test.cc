// A PostgreSQL streaming-replication standby (pg_basebackup -R of the test's
// primary) behind a real coordinator whose --database names both hosts with
// target_session_attrs=read-write. Query reads come from the standby
// (--query-database) and /metrics says how far behind it is. Failover: once
// the primary holds the first batch of an agent's run, it is stopped (fast)
// and the standby promoted by hand (pg_ctl promote) while the agent streams
// on; every sample of the agent's --output file lands on the new primary
// exactly once.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <pqxx/pqxx>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tests/e2e/dashboard_seed.h"
#include "tests/e2e/stored_runs.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"
#include "perfgate/v1/query.pb.h"
#include "wire/api_json.h"

namespace perfgate::standby_e2e_test {
namespace {

using testing::Bin;
using testing::ChildProcess;
using Clock = std::chrono::steady_clock;

constexpr char kToken[] = "standby-token";

class StandbyTest : public testing::PostgresDirTest {
 protected:
  void SetUp() override {
    testing::PostgresDirTest::SetUp();
    if (HasFatalFailure()) return;
    token_file_ = WriteTokenFile(kToken);
    auto standby = testing::StartStandbyOf(server(), ConnInfo());
    ASSERT_TRUE(standby.ok()) << standby.status();
    standby_ = std::move(standby->server);
    dbname_ = standby->dbname;
    both_ = standby->both;
  }

  // `perfgate-agent run` of the copy kernels, spooled; `commit` names it.
  std::unique_ptr<ChildProcess> StartAgent(const std::string& commit, const std::vector<std::string>& cases) {
    const std::string own = dir_->Join(commit);
    std::vector<std::string> argv = {Bin("agent/perfgate-agent"), "run", "--coordinator", coordinator_.grpc.address,
                                     "--token-file", token_file_, "--branch", "main", "--commit", commit,
                                     "--trigger", "ci", "--output", own + "-results.json", "--run-id-file",
                                     own + "-run-id", "--spool", dir_->Join("spool"), "--rpc-timeout", "10",
                                     "--reconnect-for", "120", "--filter", "kernels/copy*"};
    argv.insert(argv.end(), cases.begin(), cases.end());
    auto agent = ChildProcess::Start(argv, own + ".log");
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  std::string RunId(const std::string& commit) {
    auto id = testing::ReadFile(dir_->Join(commit + "-run-id"));
    EXPECT_TRUE(id.ok()) << id.status();
    return id.ok() ? id->substr(0, 36) : "";
  }

  // A quick run, waited for: exit 0.
  void MeasureOnce(const std::string& commit) {
    auto agent = StartAgent(commit, {"--set", "bytes=65536", "--min-time", "0.05"});
    ASSERT_NE(agent, nullptr);
    auto code = agent->Wait(std::chrono::minutes(2));
    ASSERT_EQ(code, std::optional<int>(0)) << agent->OutputTail() << coordinator_.grpc.process->OutputTail();
  }

  // `perfgate runs` through the coordinator's Query service.
  std::string ListRuns() {
    auto r = testing::RunCommand({Bin("cli/perfgate"), "--coordinator", coordinator_.grpc.address,
                                  "--token-file", token_file_, "runs"});
    EXPECT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r.ok() ? r->exit_code : -1, 0) << (r.ok() ? r->output : "");
    return r.ok() ? r->output : "";
  }

  std::string Metrics() {
    httplib::Client http("127.0.0.1", coordinator_.http_port);
    http.set_bearer_token_auth(kToken);
    auto res = http.Get("/metrics");
    return res && res->status == 200 ? res->body : "";
  }

  // Waits until the standby holds `runs` complete runs.
  void WaitForStandby(int64_t runs) {
    pqxx::connection c(standby_->ConnInfo(dbname_));
    int64_t seen = -1;
    for (const auto deadline = Clock::now() + std::chrono::seconds(60); seen != runs && Clock::now() < deadline;) {
      pqxx::read_transaction txn(c);
      seen = txn.exec1("SELECT count(*) FROM runs WHERE status = 'complete'")[0].as<int64_t>();
      if (seen != runs) coordinator_.grpc.process->Wait(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(seen, runs) << standby_->LogTail();
  }

  // The coordinator on both hosts: libpq picks the one that takes writes.
  void StartCoordinator(const std::vector<std::string>& extra) {
    auto started = testing::StartDashboardCoordinator(both_, dir_->Join("coordinator.log"), token_file_, extra);
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(*started);
  }

  // Samples and cases the primary holds once it has committed a first batch;
  // fails when the agent ends first (nothing left to fail over in).
  std::pair<int64_t, int64_t> WaitForFirstBatch(ChildProcess& agent) {
    pqxx::connection c(ConnInfo());
    for (const auto deadline = Clock::now() + std::chrono::seconds(30); Clock::now() < deadline;) {
      pqxx::read_transaction txn(c);
      const auto row = txn.exec1("SELECT count(*), count(DISTINCT benchmark_id) FROM samples");
      txn.commit();
      if (row[0].as<int64_t>() > 0) return {row[0].as<int64_t>(), row[1].as<int64_t>()};
      // Waiting on the agent wakes as soon as it ends.
      if (agent.Wait(std::chrono::milliseconds(50)).has_value()) break;
    }
    ADD_FAILURE() << "no batch stored while the agent ran: " << agent.OutputTail();
    return {0, 0};
  }

  std::string token_file_, dbname_, both_;
  std::unique_ptr<testing::PostgresServer> standby_;
  testing::DashboardCoordinator coordinator_;
};

TEST_F(StandbyTest, ReadsComeFromTheStandbyAndSayHowFreshTheyAre) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--query-database", standby_->ConnInfo(dbname_)}));

  ASSERT_NO_FATAL_FAILURE(MeasureOnce("first"));
  ASSERT_NO_FATAL_FAILURE(WaitForStandby(1));
  EXPECT_NE(ListRuns().find(RunId("first")), std::string::npos);
  EXPECT_NE(Metrics().find("perfgate_query_standby_lag_seconds "), std::string::npos) << Metrics();
  {
    // The run views say how fresh the standby's data is.
    httplib::Client http("127.0.0.1", coordinator_.http_port);
    http.set_bearer_token_auth(kToken);
    auto res = http.Get("/api/v1/runs");
    ASSERT_TRUE(res);
    v1::ListRunsResponse view;
    ASSERT_TRUE(wire::FromApiJson(res->body, &view, "runs").ok()) << res->body;
    EXPECT_TRUE(view.has_data_as_of()) << res->body;
    EXPECT_GT(view.data_as_of().seconds(), 0) << res->body;
  }

  // The standby stops replaying: a run stored now is on the primary only,
  // and Query, served by the standby, does not list it yet.
  {
    pqxx::connection c(standby_->ConnInfo(dbname_));
    pqxx::nontransaction(c).exec("SELECT pg_wal_replay_pause()");
  }
  ASSERT_NO_FATAL_FAILURE(MeasureOnce("second"));
  const std::string listed = ListRuns();
  EXPECT_NE(listed.find(RunId("first")), std::string::npos) << listed;
  EXPECT_EQ(listed.find(RunId("second")), std::string::npos) << listed;
  std::smatch lag;
  const std::string metrics = Metrics();
  ASSERT_TRUE(std::regex_search(metrics, lag, std::regex(R"(perfgate_query_standby_lag_seconds ([0-9.]+)\n)")))
      << metrics;
  EXPECT_GT(std::stod(lag[1]), 0.0) << metrics;
  {
    pqxx::connection c(standby_->ConnInfo(dbname_));
    pqxx::nontransaction(c).exec("SELECT pg_wal_replay_resume()");
  }
  ASSERT_NO_FATAL_FAILURE(WaitForStandby(2));
  EXPECT_NE(ListRuns().find(RunId("second")), std::string::npos);
}

TEST_F(StandbyTest, AStandbyPromotedMidStreamStoresEverySampleOfTheAgentExactlyOnce) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({}));
  // Four cases of at least 0.3 s each: the run goes on well past its first batch.
  auto agent = StartAgent("streamed", {"--set", "bytes=65536,262144,1048576,4194304", "--min-time", "0.3",
                                       "--timeout", "0.8"});
  ASSERT_NE(agent, nullptr);
  const auto [samples_before, cases_before] = WaitForFirstBatch(*agent);
  ASSERT_GT(samples_before, 0);
  ASSERT_TRUE(agent->Running()) << "the agent finished before the failover: " << agent->OutputTail();

  // The primary stops (fast shutdown: its standby gets all its WAL first)
  // and the standby is promoted while the agent is still streaming.
  server().Stop();
  ASSERT_TRUE(standby_->Promote().ok()) << standby_->LogTail();
  ASSERT_EQ(agent->Wait(std::chrono::minutes(2)), std::optional<int>(0))
      << agent->OutputTail() << coordinator_.grpc.process->OutputTail();

  // Every sample of the agent's --output file is on the new primary once:
  // none lost, none twice, and the cases streamed after the promotion too.
  pqxx::connection c(standby_->ConnInfo(dbname_));
  pqxx::read_transaction txn(c);
  testing::ExpectRunStoredAsFiled(txn, RunId("streamed"), dir_->Join("streamed-results.json"));
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM runs")[0].as<int64_t>(), 1);
  EXPECT_GT(txn.exec1("SELECT count(*) FROM samples")[0].as<int64_t>(), samples_before);
  EXPECT_GT(txn.exec1("SELECT count(DISTINCT benchmark_id) FROM samples")[0].as<int64_t>(), cases_before);
}

}  // namespace
}  // namespace perfgate::standby_e2e_test
