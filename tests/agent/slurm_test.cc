// The agent under a real Slurm, no MPI: a private single-node cluster
// (tests/support/slurm.h) runs two tasks of perfgate-agent, which take their
// rank and the world size from srun's task environment alone (no --rank, no
// --world-size) and train the host data-parallel case as two ranks.
#include "tests/support/slurm.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/support/processes.h"

namespace perfgate::slurm_test {
namespace {

using testing::Bin;
using testing::ReadFile;
using testing::SlurmCluster;

constexpr auto kJobTimeout = std::chrono::minutes(2);
constexpr char kKey[] =
    "training/data_parallel{backend=host,batch=4,dtype=fp32,preset=tiny,ranks=2,seq=32,threads=1}";

// The agent's arguments for the two-rank case; the world comes from Slurm.
std::vector<std::string> AgentArgs(const std::string& rendezvous, const std::string& output) {
  return {Bin("agent/perfgate-agent"),
          "run",
          "--suite",
          "training",
          "--filter",
          "data_parallel{backend=host*",
          "--rendezvous",
          rendezvous,
          "--transport-host",
          "127.0.0.1",
          "--offline",
          "--output",
          output,
          "--min-samples",
          "5",
          "--min-time",
          "0",
          "--max-noise",
          "1000",
          "--timeout",
          "30"};
}

class SlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status s = SlurmCluster::CanRun(); !s.ok()) GTEST_SKIP() << s.message();
    auto cluster = SlurmCluster::Start();
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    cluster_ = std::move(*cluster);
  }

  // Runs even when the test failed: no daemon or job step may outlive it.
  void TearDown() override { cluster_.reset(); }

  // srun --label prefixes every line with its task number: "0: ...", "1: ...".
  static void ExpectBothTasksNameTheCase(const std::string& output) {
    EXPECT_TRUE(absl::StrContains(output, absl::StrCat("0:   ", kKey))) << output;
    EXPECT_TRUE(absl::StrContains(output, absl::StrCat("1:   rank 1 ", kKey))) << output;
  }

  // Only rank 0 writes the result file.
  static void ExpectTwoRankResult(const std::string& path) {
    auto text = ReadFile(path);
    ASSERT_TRUE(text.ok()) << text.status();
    EXPECT_TRUE(absl::StrContains(*text, "\"ranks\": \"2\"")) << text->substr(0, 400);
    EXPECT_TRUE(absl::StrContains(*text, "\"status\": \"ok\"")) << text->substr(0, 400);
  }

  std::unique_ptr<SlurmCluster> cluster_;
};

TEST_F(SlurmTest, TwoSrunTasksTrainDataParallelAsTwoRanks) {
  const std::string out = cluster_->dir().Join("out.json");
  std::vector<std::string> argv = {"srun", "--ntasks=2", "--label", "--kill-on-bad-exit=1"};
  for (std::string& a : AgentArgs("file:" + cluster_->dir().Join("rendezvous"), out)) {
    argv.push_back(std::move(a));
  }
  auto r = cluster_->Run(argv, kJobTimeout);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->exit_code, 0) << r->output << "\n" << cluster_->LogTails();
  EXPECT_TRUE(absl::StrContains(r->output, "1: perfgate-agent: rank 1 of 2")) << r->output;
  ExpectBothTasksNameTheCase(r->output);
  ExpectTwoRankResult(out);
}

// The batch path of deploy/slurm/training.sbatch: sbatch allocates two tasks
// and the script's srun starts the ranks, which meet at a TCP store that
// rank 0 serves.
TEST_F(SlurmTest, BatchJobTrainsDataParallelOverTcpRendezvous) {
  auto port = testing::FreeTcpPort();
  ASSERT_TRUE(port.ok()) << port.status();
  const std::string out = cluster_->dir().Join("out.json");
  std::string script = "#!/bin/bash\nset -euo pipefail\nsrun --label --kill-on-bad-exit=1";
  for (const std::string& a : AgentArgs(absl::StrCat("tcp:127.0.0.1:", *port), out)) {
    absl::StrAppend(&script, " '", a, "'");
  }
  absl::StrAppend(&script, "\n");
  const std::string script_path = cluster_->dir().Join("job.sbatch");
  {
    std::ofstream f(script_path);
    f << script;
    ASSERT_TRUE(f.flush());
  }
  const std::string job_out = cluster_->dir().Join("job.out");
  auto r = cluster_->Run({"sbatch", "--wait", "--ntasks=2", "--output=" + job_out, script_path},
                         kJobTimeout);
  ASSERT_TRUE(r.ok()) << r.status();
  auto log = ReadFile(job_out);
  ASSERT_TRUE(log.ok()) << log.status() << "\n" << r->output;
  ASSERT_EQ(r->exit_code, 0) << r->output << "\n" << *log << "\n" << cluster_->LogTails();
  ExpectBothTasksNameTheCase(*log);
  ExpectTwoRankResult(out);
}

}  // namespace
}  // namespace perfgate::slurm_test
