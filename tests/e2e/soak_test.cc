// A soak under faults (label soak): PERFGATE_SOAK_AGENTS agent slots (6
// unless told) each running `perfgate-agent run` again and again for
// PERFGATE_SOAK_SECONDS (30 unless told) into two coordinator replicas
// through one address list. The replicas' --database names the primary and
// a streaming-replication standby with target_session_attrs=read-write.
// Replica 0 is killed (SIGKILL) and restarted on its port at a third and at
// two thirds of the time; the primary is stopped and started again at 0.45,
// and at 0.55 it is stopped for good and the standby promoted, which the
// replicas follow while the agents keep spooling. At the end every run an
// agent finished is stored on the new primary exactly as its agent's result
// file has it (per case: sample count, distinct indexes, the sum of the
// values), with no duplicate, no run is left open, and `perfgate gate` of
// the last three runs against the branch's history raises no false alarm
// (same build: no metric a regression; a copy that six agents on two cores
// left too noisy to judge may stay undecided, never fail). The figures (runs, samples, ingest rate,
// replica 1's CPU and its batch store latency percentiles) are printed for
// docs/performance.md.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/exit_codes.h"
#include "gate/report.h"
#include "tests/e2e/stored_runs.h"
#include "tests/support/coordinator.h"
#include "tests/support/gate_reports.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::soak_test {
namespace {

using testing::Bin;
using testing::ChildProcess;
using Clock = std::chrono::steady_clock;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

// One finished agent run: its result file and the run id it printed.
struct Finished {
  std::string results, run_id;
};

// Tolerant: runs of one build on a loaded shared machine must not fail it.
constexpr char kPolicy[] = R"(version: 1
defaults:
  tolerance: 90%
  fdr: 5%
  history: 5
)";

// Where a fault falls (a fraction of the time) and what it is.
enum class Fault { kKillReplica, kRestartDatabase, kPromoteStandby };

class SoakTest : public testing::PostgresDirTest {
 protected:
  void SetUp() override {
    testing::PostgresDirTest::SetUp();
    if (HasFatalFailure()) return;
    auto standby = testing::StartStandbyOf(server(), ConnInfo());
    ASSERT_TRUE(standby.ok()) << standby.status();
    standby_ = std::move(standby->server);
    dbname_ = standby->dbname;
    both_ = standby->both;
  }

  void StartReplica(int i, int port) {
    auto started = testing::StartCoordinator(
        both_, dir_->Join("replica-" + std::to_string(i) + "-" + std::to_string(++starts_) + ".log"),
        {"--http-listen", "127.0.0.1:0", "--expire-runs-after", "0"}, port);
    ASSERT_TRUE(started.ok()) << started.status();
    replicas_[i] = std::move(*started);
  }

  int PortOf(int i) const { return std::stoi(replicas_[i].address.substr(replicas_[i].address.rfind(':') + 1)); }

  // Slot `slot`'s next agent run, its files under dir/slot-<slot>/<n>.
  std::unique_ptr<ChildProcess> StartAgent(int slot, int n) {
    const std::string own = dir_->Join("slot-" + std::to_string(slot));
    std::filesystem::create_directories(own);
    const std::string base = own + "/" + std::to_string(n);
    auto agent = ChildProcess::Start(
        {Bin("agent/perfgate-agent"), "run", "--coordinator", address_list_, "--agent-name",
         "soak-" + std::to_string(slot), "--branch", "main", "--commit", "c" + std::to_string(n), "--trigger", "ci",
         "--output", base + "-results.json", "--run-id-file", base + "-run-id", "--spool", own + "/spool",
         "--rpc-timeout", "10", "--reconnect-for", "120", "--filter", "kernels/copy*", "--set",
         "bytes=65536,262144", "--min-time", "0.05", "--timeout", "0.5"},
        base + ".log");
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  void Inject(Fault fault) {
    if (fault == Fault::kKillReplica) {
      const int port = PortOf(0);
      replicas_[0].process->Stop(SIGKILL, std::chrono::seconds(5));
      ASSERT_NO_FATAL_FAILURE(StartReplica(0, port));
    } else if (fault == Fault::kRestartDatabase) {
      server().Stop();
      ASSERT_TRUE(server().StartAgain().ok()) << server().LogTail();
    } else {
      // A fast shutdown sends the standby all WAL first, if it streams.
      ASSERT_NO_FATAL_FAILURE(WaitForStreaming());
      server().Stop();
      ASSERT_TRUE(standby_->Promote().ok()) << standby_->LogTail();
    }
  }

  // Waits until the primary has a standby streaming from it (it reconnects
  // a few seconds after a restart of the primary).
  void WaitForStreaming() {
    pqxx::connection c(ConnInfo());
    int64_t streaming = 0;
    for (const auto deadline = Clock::now() + std::chrono::seconds(60); Clock::now() < deadline;) {
      pqxx::read_transaction txn(c);
      streaming = txn.exec1("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")[0].as<int64_t>();
      if (streaming > 0) break;
      replicas_[1].process->Wait(std::chrono::milliseconds(100));
    }
    ASSERT_GT(streaming, 0) << standby_->LogTail();
  }

  // `perfgate gate` of a stored run against the history of branch main: no
  // false alarm (exit 0 or 3, no metric a regression), every verdict gating
  // against earlier runs, and at least one metric judged a pass.
  void ExpectNoFalseAlarm(const std::string& run_id) {
    const std::string policy = dir_->Join("policy.yaml"), json = dir_->Join("gate-" + run_id + ".json");
    std::ofstream(policy) << kPolicy;
    auto r = testing::RunCommand({Bin("cli/perfgate"), "--coordinator", replicas_[1].address, "gate", "--run",
                                  run_id, "--baseline-branch", "main", "--policy", policy, "--json", json});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->exit_code == kExitPass || r->exit_code == kExitInconclusive) << r->output;
    auto report = testing::ReadGateReport(json);
    ASSERT_TRUE(report.ok()) << report.status() << r->output;
    EXPECT_NE(report->result.outcome, gate::Outcome::kRegression) << r->output;
    ASSERT_FALSE(report->result.verdicts.empty()) << r->output;
    int passes = 0;
    for (const gate::MetricVerdict& v : report->result.verdicts) {
      const std::string what = v.benchmark + " " + v.metric + " (" + gate::ToString(v.verdict) + "): " + v.note;
      EXPECT_TRUE(v.gating) << what;
      EXPECT_GT(v.baseline_runs, 0u) << what;
      EXPECT_NE(v.verdict, gate::Verdict::kRegression) << what;
      passes += v.verdict == gate::Verdict::kPass;
    }
    EXPECT_GT(passes, 0) << r->output;
  }

  std::unique_ptr<testing::PostgresServer> standby_;  // stopped after the replicas
  std::string dbname_, both_;
  testing::RunningCoordinator replicas_[2];
  std::string address_list_;
  int starts_ = 0;
};

// CPU seconds a live process has used (user and system), from /proc.
double CpuSeconds(pid_t pid) {
  auto stat = testing::ReadFile("/proc/" + std::to_string(pid) + "/stat");
  if (!stat.ok()) return NAN;
  // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
  std::istringstream in(stat->substr(stat->rfind(')') + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// p-th percentile (0..1) from a Prometheus histogram's cumulative buckets.
double Percentile(const std::string& metrics, const std::string& name, double p) {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative)
  const std::regex re(name + R"re(_bucket\{le="([^"]+)"\} (\d+))re");
  for (auto it = std::sregex_iterator(metrics.begin(), metrics.end(), re); it != std::sregex_iterator(); ++it) {
    const std::string le = (*it)[1];
    buckets.emplace_back(le == "+Inf" ? INFINITY : std::stod(le), std::stod((*it)[2]));
  }
  if (buckets.empty() || buckets.back().second == 0) return NAN;
  for (const auto& [le, n] : buckets) {
    if (n >= p * buckets.back().second) return le;
  }
  return INFINITY;
}

TEST_F(SoakTest, AgentsStreamIntoTwoReplicasThroughKillsARestartAndAPromotion) {
  const int seconds = EnvInt("PERFGATE_SOAK_SECONDS", 30), slots = EnvInt("PERFGATE_SOAK_AGENTS", 6);
  ASSERT_NO_FATAL_FAILURE(StartReplica(0, 0));
  ASSERT_NO_FATAL_FAILURE(StartReplica(1, 0));
  address_list_ = replicas_[0].address + "," + replicas_[1].address;
  const auto start = Clock::now(), end = start + std::chrono::seconds(seconds);
  std::vector<std::unique_ptr<ChildProcess>> agents(slots);
  std::vector<int> runs_started(slots, 0);
  std::vector<Finished> finished;
  int failed_agents = 0;
  // Faults at these fractions of the time: replica 0 killed and restarted, PostgreSQL restarted.
  std::vector<std::pair<double, Fault>> faults = {{1.0 / 3, Fault::kKillReplica},
                                                 {0.45, Fault::kRestartDatabase},
                                                 {0.55, Fault::kPromoteStandby},
                                                 {2.0 / 3, Fault::kKillReplica}};
  while (true) {
    const bool running_out = Clock::now() >= end;
    bool any = false;
    for (int s = 0; s < slots; ++s) {
      if (agents[s] != nullptr) {
        auto code = agents[s]->Wait(std::chrono::milliseconds(0));
        if (!code) {
          any = true;
          continue;
        }
        const std::string base = dir_->Join("slot-" + std::to_string(s)) + "/" + std::to_string(runs_started[s]);
        if (*code != 0) {
          ++failed_agents;
          ADD_FAILURE() << "agent exit " << *code << ":\n" << agents[s]->OutputTail();
        }
        auto id = testing::ReadFile(base + "-run-id");
        if (*code == 0 && id.ok()) finished.push_back({base + "-results.json", id->substr(0, 36)});
        agents[s].reset();
      }
      if (!running_out) {
        agents[s] = StartAgent(s, ++runs_started[s]);
        any = true;
      }
    }
    if (running_out && !any) break;
    const double at = std::chrono::duration<double>(Clock::now() - start).count() / seconds;
    if (!faults.empty() && at >= faults.front().first) {
      ASSERT_NO_FATAL_FAILURE(Inject(faults.front().second));
      faults.erase(faults.begin());
    }
    // Polls the agents: a child's exit has no descriptor to wait on here.
    replicas_[1].process->Wait(std::chrono::milliseconds(50));
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  const double replica_cpu = CpuSeconds(replicas_[1].process->pid());
  EXPECT_EQ(failed_agents, 0);
  ASSERT_GT(finished.size(), static_cast<size_t>(slots));
  ASSERT_TRUE(faults.empty());
  pqxx::connection c(standby_->ConnInfo(dbname_));  // the new primary
  pqxx::read_transaction txn(c);
  for (const Finished& f : finished) testing::ExpectRunStoredAsFiled(txn, f.run_id, f.results);
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM runs WHERE status <> 'complete'")[0].as<int64_t>(), 0);
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM runs")[0].as<int64_t>(), static_cast<int64_t>(finished.size()));
  const auto samples = txn.exec1("SELECT count(*) FROM samples")[0].as<int64_t>();
  // No false alarm: the last runs judged against those before them.
  for (size_t i = finished.size() - 3; i < finished.size(); ++i) ExpectNoFalseAlarm(finished[i].run_id);
  // Replica 1 ran throughout: its store latency per batch.
  std::smatch m;
  const std::string log = replicas_[1].process->Output();
  ASSERT_TRUE(std::regex_search(log, m, std::regex(R"(dashboard at http://127\.0\.0\.1:(\d+)/)")));
  httplib::Client http("127.0.0.1", std::stoi(m[1]));
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  std::cout << "soak: " << slots << " agent slots, " << elapsed << " s, " << finished.size() << " runs, " << samples
            << " samples (" << samples / elapsed << " a second); replica 1: " << replica_cpu << " s CPU ("
            << 100 * replica_cpu / elapsed << " % of a core), batch store latency p50 <= "
            << Percentile(metrics->body, "perfgate_ingest_batch_seconds", 0.5) << " s, p99 <= "
            << Percentile(metrics->body, "perfgate_ingest_batch_seconds", 0.99) << " s" << std::endl;
}

}  // namespace
}  // namespace perfgate::soak_test
