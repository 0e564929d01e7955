// Faults injected into a real run (label chaos): a private PostgreSQL, the
// coordinator binary and `perfgate-agent run` measuring real cases. The
// database stopped for 20 s, a statement cancelled, the coordinator killed:
// the agent finishes with exit 0 and the stored run holds exactly the
// samples of the agent's own result file, with no replay. An agent killed
// mid-run: its run is expired as failed by the coordinator.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <pqxx/pqxx>
#include <string>
#include <vector>

#include "formats/result_file.h"
#include "tests/e2e/stored_runs.h"
#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::chaos_test {
namespace {

using testing::Bin;
using testing::ChildProcess;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

// Four small cases of under a second each: a fault lands mid-run.
const std::vector<std::string> kCases = {"--filter", "kernels/copy*", "--set", "bytes=65536,262144,1048576,4194304",
                                         "--min-time", "0.2", "--timeout", "0.6"};

class ChaosTest : public testing::PostgresDirTest {
 protected:
  void StartCoordinator(const std::vector<std::string>& extra = {}, int port = 0) {
    auto started = testing::StartCoordinator(ConnInfo(), dir_->Join("coordinator-" + std::to_string(++starts_) + ".log"),
                                             extra, port);
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(started->process);
    address_ = started->address;
  }

  // Starts `perfgate-agent run` on the cases, writing its result file.
  void StartAgent(const std::string& rpc_timeout = "10") {
    std::vector<std::string> argv = {Bin("agent/perfgate-agent"), "run", "--coordinator", address_,
                                     "--branch", "main", "--commit", "c0ffee", "--trigger", "ci",
                                     "--output", dir_->Join("results.json"), "--run-id-file",
                                     dir_->Join("run-id"), "--spool", dir_->Join("spool"),
                                     "--rpc-timeout", rpc_timeout, "--reconnect-for", "120"};
    argv.insert(argv.end(), kCases.begin(), kCases.end());
    auto agent = ChildProcess::Start(argv, dir_->Join("agent.log"));
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = std::move(*agent);
  }

  // Waits for the agent's first finished case: the run is under way.
  void WaitForFirstCase() {
    ASSERT_TRUE(agent_->WaitForLine(" samples, ", std::chrono::seconds(60))) << agent_->OutputTail();
  }

  // The agent's exit code, waiting up to 3 minutes.
  int AgentExit() {
    auto code = agent_->Wait(std::chrono::minutes(3));
    EXPECT_TRUE(code.has_value()) << agent_->OutputTail();
    return code.value_or(-1);
  }

  // The run in the database holds exactly what the agent's result file
  // holds, and the spool let it go.
  void ExpectStoredExactly() {
    auto id = testing::ReadFile(dir_->Join("run-id"));
    ASSERT_TRUE(id.ok()) << id.status() << "\n" << agent_->OutputTail();
    const std::string run_id = id->substr(0, 36);
    {
      pqxx::connection c(ConnInfo());
      pqxx::read_transaction txn(c);
      testing::ExpectRunStoredAsFiled(txn, run_id, dir_->Join("results.json"));
    }
    auto left = testing::ReadFile(dir_->Join("spool") + "/" + run_id + "/run.pb");
    EXPECT_FALSE(left.ok()) << "the run is still in the spool";
  }

  std::unique_ptr<ChildProcess> coordinator_;
  std::unique_ptr<ChildProcess> agent_;
  std::string address_;
  int starts_ = 0;
};

TEST_F(ChaosTest, PostgresStoppedFor20SecondsMidRunCostsNothing) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  ASSERT_NO_FATAL_FAILURE(StartAgent());
  ASSERT_NO_FATAL_FAILURE(WaitForFirstCase());
  server().Stop();
  // The outage itself is the condition under test: 20 s without a database.
  const auto until = Clock::now() + std::chrono::seconds(20);
  EXPECT_FALSE(agent_->Wait(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now())).has_value())
      << "the agent gave up during the outage:\n" << agent_->OutputTail();
  ASSERT_TRUE(server().StartAgain().ok()) << server().LogTail();
  EXPECT_EQ(AgentExit(), 0) << agent_->OutputTail() << "\n--- coordinator ---\n" << coordinator_->OutputTail();
  ExpectStoredExactly();
}

TEST_F(ChaosTest, ACancelledStatementMidRunIsRetried) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  ASSERT_NO_FATAL_FAILURE(StartAgent());
  ASSERT_NO_FATAL_FAILURE(WaitForFirstCase());
  // The next batch waits on a lock; its statement is cancelled as a
  // statement_timeout would, then the lock is released.
  pqxx::connection holder(ConnInfo());
  pqxx::work lock(holder);
  lock.exec("LOCK TABLE batches IN SHARE MODE");
  pqxx::connection watcher(ConnInfo());
  bool cancelled = false;
  for (const auto deadline = Clock::now() + std::chrono::seconds(60); !cancelled && Clock::now() < deadline;) {
    pqxx::nontransaction q(watcher);
    cancelled = !q.exec("SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                        "AND query LIKE 'INSERT INTO batches%'")
                     .empty();
    if (!cancelled) agent_->Wait(std::chrono::milliseconds(50));  // polls pg_stat_activity
  }
  lock.commit();
  EXPECT_TRUE(cancelled) << "no batch waited on the lock";
  EXPECT_EQ(AgentExit(), 0) << agent_->OutputTail() << "\n--- coordinator ---\n" << coordinator_->OutputTail();
  ExpectStoredExactly();
}

TEST_F(ChaosTest, TheCoordinatorKilledMidRunCostsNothing) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  const int port = std::stoi(address_.substr(address_.rfind(':') + 1));
  ASSERT_NO_FATAL_FAILURE(StartAgent());
  ASSERT_NO_FATAL_FAILURE(WaitForFirstCase());
  coordinator_->Stop(SIGKILL, std::chrono::seconds(5));
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({}, port));
  EXPECT_EQ(AgentExit(), 0) << agent_->OutputTail() << "\n--- coordinator ---\n" << coordinator_->OutputTail();
  ExpectStoredExactly();
}

TEST_F(ChaosTest, ARunWhoseAgentWasKilledExpiresAsFailed) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator({"--expire-runs-after", "3"}));
  ASSERT_NO_FATAL_FAILURE(StartAgent());
  ASSERT_NO_FATAL_FAILURE(WaitForFirstCase());
  agent_->Stop(SIGKILL, std::chrono::seconds(5));
  pqxx::connection c(ConnInfo());
  std::string status = "running", reason;
  for (const auto deadline = Clock::now() + std::chrono::seconds(60); status == "running" && Clock::now() < deadline;) {
    pqxx::read_transaction txn(c);
    pqxx::result r = txn.exec("SELECT status, failure_reason FROM runs");
    ASSERT_EQ(r.size(), 1u);
    status = r[0][0].as<std::string>();
    reason = r[0][1].as<std::string>();
    if (status == "running") coordinator_->WaitForLine("expired as failed", std::chrono::milliseconds(200));
  }
  EXPECT_EQ(status, "failed");
  EXPECT_NE(reason.find("expired"), std::string::npos) << reason;
}

// The coordinator gone for good mid-run, with a 30 s --rpc-timeout: the
// agent measures its remaining cases without waiting on the network (a
// short look at the connection per attempt), writes every case to its
// result file, and a SIGTERM while it waits to close leaves that file.
TEST_F(ChaosTest, AnAbsentCoordinatorCostsNoMeasuringTime) {
  ASSERT_NO_FATAL_FAILURE(StartCoordinator());
  ASSERT_NO_FATAL_FAILURE(StartAgent("30"));
  ASSERT_NO_FATAL_FAILURE(WaitForFirstCase());
  coordinator_->Stop(SIGKILL, std::chrono::seconds(5));
  // The last of the four cases, each under a second, well before a single
  // call timeout would have passed.
  EXPECT_TRUE(agent_->WaitForLine("kernels/copy{bytes=4194304}: ", std::chrono::seconds(20)))
      << agent_->OutputTail();
  ASSERT_TRUE(agent_->WaitForLine("results written to", std::chrono::seconds(20))) << agent_->OutputTail();
  agent_->Stop(SIGTERM, std::chrono::seconds(10));
  auto file = ReadResultFile(dir_->Join("results.json"));
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->cases.size(), 4u);
}

// SIGTERM mid-run (scancel, a Slurm time limit): the case being measured
// ends, what was measured is written to --output and the agent exits 2
// saying why, instead of dying with nothing written.
TEST_F(ChaosTest, SigtermMidRunWritesWhatWasMeasured) {
  std::vector<std::string> argv = {Bin("agent/perfgate-agent"), "run", "--offline", "--branch", "main",
                                   "--output", dir_->Join("results.json")};
  argv.insert(argv.end(), kCases.begin(), kCases.end());
  auto agent = ChildProcess::Start(argv, dir_->Join("agent.log"));
  ASSERT_TRUE(agent.ok()) << agent.status();
  agent_ = std::move(*agent);
  ASSERT_NO_FATAL_FAILURE(WaitForFirstCase());
  kill(agent_->pid(), SIGTERM);
  EXPECT_EQ(AgentExit(), 2) << agent_->OutputTail();
  EXPECT_NE(agent_->Output().find("stopped by signal 15"), std::string::npos) << agent_->OutputTail();
  auto file = ReadResultFile(dir_->Join("results.json"));
  ASSERT_TRUE(file.ok()) << file.status() << "\n" << agent_->OutputTail();
  EXPECT_GE(file->cases.size(), 1u);
  EXPECT_LT(file->cases.size(), 4u);
}

}  // namespace
}  // namespace perfgate::chaos_test
