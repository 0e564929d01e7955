// A PostgreSQL streaming-replication standby (pg_basebackup -R of the test's
// primary) behind a real coordinator: Query reads come from the standby
// (--query-database) and /metrics says how far behind it is; then the
// primary is stopped mid-run, the standby promoted by hand (pg_ctl
// promote), and the coordinator, whose --database names both hosts with
// target_session_attrs=read-write, goes on with the agent's run: it lands
// exactly once on the new primary.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <regex>
#include <string>
#include <vector>

#include "tests/e2e/dashboard_seed.h"
#include "tests/e2e/stored_runs.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate {
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

  std::string token_file_, dbname_, both_;
  std::unique_ptr<testing::PostgresServer> standby_;
  testing::DashboardCoordinator coordinator_;
};

TEST_F(StandbyTest, ReadsComeFromTheStandbyAndARunOutlivesThePrimary) {
  // Both hosts, the one that takes writes chosen by libpq.
  auto started = testing::StartDashboardCoordinator(both_, dir_->Join("coordinator.log"), token_file_,
                                                    {"--query-database", standby_->ConnInfo(dbname_)});
  ASSERT_TRUE(started.ok()) << started.status();
  coordinator_ = std::move(*started);

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
    const nlohmann::json view = nlohmann::json::parse(res->body, nullptr, false);
    ASSERT_TRUE(view.is_object()) << res->body;
    EXPECT_TRUE(view["data_as_of"].is_number()) << res->body;
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

  // Failover mid-run: the primary stops, the standby is promoted.
  auto agent = StartAgent("third", {"--set", "bytes=65536,262144,1048576,4194304", "--min-time", "0.3",
                                    "--timeout", "0.8"});
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(agent->WaitForLine(" samples, ", std::chrono::seconds(60))) << agent->OutputTail();
  server().Stop();
  ASSERT_TRUE(standby_->Promote().ok()) << standby_->LogTail();
  EXPECT_EQ(agent->Wait(std::chrono::minutes(3)), std::optional<int>(0))
      << agent->OutputTail() << coordinator_.grpc.process->OutputTail();

  // The run is on the new primary exactly as the agent's result file has it.
  pqxx::connection c(standby_->ConnInfo(dbname_));
  pqxx::read_transaction txn(c);
  testing::ExpectRunStoredAsFiled(txn, RunId("third"), dir_->Join("third-results.json"));
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM runs WHERE status = 'complete'")[0].as<int64_t>(), 3);
}

}  // namespace
}  // namespace perfgate
