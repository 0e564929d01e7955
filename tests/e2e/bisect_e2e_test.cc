// `perfgate bisect` end to end: a real git repository of 16 commits of a
// small Google Benchmark program in which one commit adds 15 % more work
// (real iterations of a work loop, so the slowdown is certain on a noisy
// machine), built per commit in a worktree by g++, each probe measured by
// the real `perfgate-agent ab` against the good endpoint, every step
// stored in the real coordinator over a private PostgreSQL. The bisection
// is killed with its probe after the first step and resumed from its stored
// probes; it names the commit. The same history without the slowdown ends
// with no culprit and names no commit. With a Slurm cluster (label slurm),
// the same bisection runs each round as an sbatch array.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <signal.h>

#include <fstream>
#include <regex>

#include "tests/e2e/dashboard_seed.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"
#include "tests/support/slurm.h"

namespace perfgate {
namespace {

using Json = nlohmann::json;
using testing::Bin;
using testing::RunCommand;

constexpr char kToken[] = "bisect-token";
constexpr int kCommits = 16;
constexpr int kCulpritCommit = 11;  // 1-based: commit 11 adds the work

constexpr char kBench[] = R"(// A work loop: kExtraPercent more iterations make it that much slower.
#include <benchmark/benchmark.h>
#include <cstdint>
#include "extra.h"

static void BM_Work(benchmark::State& state) {
  const uint64_t n = 200000 * (100 + kExtraPercent) / 100;
  for (auto _ : state) {
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_Work);
BENCHMARK_MAIN();
)";

class BisectEndToEnd : public testing::PostgresDirTest {
 protected:
  void SetUp() override {
    testing::PostgresDirTest::SetUp();
    if (HasFatalFailure()) return;
    token_file_ = dir_->Join("token");
    std::ofstream(token_file_) << kToken << "\n";
    auto started = testing::StartDashboardCoordinator(ConnInfo(), dir_->Join("coordinator.log"), token_file_);
    ASSERT_TRUE(started.ok()) << started.status();
    coordinator_ = std::move(*started);
  }

  void Git(const std::string& repo, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"git", "-C", repo};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCommand(argv);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->exit_code, 0) << r->output;
  }

  std::string Head(const std::string& repo) {
    auto r = RunCommand({"git", "-C", repo, "rev-parse", "HEAD"});
    return r.ok() ? r->output.substr(0, 40) : "";
  }

  // Sixteen commits; commit kCulpritCommit sets the extra work to
  // `slowdown_pct` (0: it only touches a comment). The commits, oldest first.
  std::vector<std::string> MakeRepo(const std::string& name, int slowdown_pct) {
    const std::string repo = dir_->Join(name);
    std::vector<std::string> commits;
    std::filesystem::create_directories(repo);
    Git(repo, {"init", "-q", "-b", "main"});
    Git(repo, {"config", "user.email", "dev@example.com"});
    Git(repo, {"config", "user.name", "dev"});
    std::ofstream(repo + "/bench.cc") << kBench;
    for (int i = 1; i <= kCommits; ++i) {
      const int extra = i >= kCulpritCommit ? slowdown_pct : 0;
      std::ofstream(repo + "/extra.h") << "// revision " << (i == kCulpritCommit ? "tuned" : "base") << "\n"
                                        << "constexpr int kExtraPercent = " << extra << ";\n";
      std::ofstream(repo + "/NOTES", std::ios::app) << "change " << i << "\n";
      Git(repo, {"add", "-A"});
      Git(repo, {"commit", "-q", "-m", "change " + std::to_string(i)});
      commits.push_back(Head(repo));
    }
    return commits;
  }

  std::vector<std::string> BisectArgs(const std::string& repo, const std::vector<std::string>& commits) {
    return {Bin("cli/perfgate"), "--token-file", token_file_, "bisect", "--http", Http(),
            "--good", commits.front(), "--bad", commits.back(), "--repo", repo,
            "--work-dir", repo + ".work",
            "--build", "g++ -O2 -o {out}/bench bench.cc -lbenchmark -lpthread",
            "--cmd", "{artifact}/bench --benchmark_repetitions={samples} --benchmark_min_time=0.05 "
                     "--benchmark_out={out} --benchmark_out_format=json",
            "--agent", Bin("agent/perfgate-agent"), "--ab-arg=--block-time=0.3", "--ab-arg=--block-timeout=120",
            "--case-budget", "40"};
  }

  std::string Http() const { return "127.0.0.1:" + std::to_string(coordinator_.http_port); }

  Json GetJson(const std::string& path) {
    httplib::Client http("127.0.0.1", coordinator_.http_port);
    http.set_bearer_token_auth(kToken);
    auto res = http.Get(path.c_str());
    EXPECT_TRUE(res) << path;
    if (!res) return {};
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
    return Json::parse(res->body);
  }

  static int64_t BisectionId(const std::string& output) {
    std::smatch m;
    if (!std::regex_search(output, m, std::regex(R"(bisection (\d+):)"))) return 0;
    return std::stoll(m[1]);
  }

  std::string token_file_;
  testing::DashboardCoordinator coordinator_;
};

TEST_F(BisectEndToEnd, InterruptedBisectionResumesFromItsStoredProbesAndNamesTheCommitThatAddsTheSlowdown) {
  const std::vector<std::string> commits = MakeRepo("slow", 15);
  const std::string culprit = commits[kCulpritCommit - 1];
  auto child = testing::ChildProcess::Start(BisectArgs(dir_->Join("slow"), commits), dir_->Join("first.log"));
  ASSERT_TRUE(child.ok()) << child.status();
  // The bad endpoint measured and stored: kill the bisection and what it runs.
  ASSERT_TRUE((*child)->WaitForLine("(attempt 1): carries", std::chrono::minutes(5))) << (*child)->Output();
  kill(-(*child)->pid(), SIGKILL);
  (*child)->Wait(std::chrono::seconds(30));
  const int64_t id = BisectionId((*child)->Output());
  ASSERT_GT(id, 0) << (*child)->Output();
  const size_t stored = GetJson("/api/v1/bisections/" + std::to_string(id))["probes"].size();
  ASSERT_GE(stored, 1u);

  auto resumed = RunCommand({Bin("cli/perfgate"), "--token-file", token_file_, "bisect", "--http", Http(),
                             "--resume", std::to_string(id)},
                            {}, std::chrono::minutes(10));
  ASSERT_TRUE(resumed.ok()) << resumed.status();
  std::cout << (*child)->Output() << resumed->output;
  EXPECT_EQ(resumed->exit_code, 0) << resumed->output;
  EXPECT_NE(resumed->output.find("resuming bisection " + std::to_string(id) + " from its " +
                                 std::to_string(stored) + " stored probe(s)"),
            std::string::npos);

  const Json b = GetJson("/api/v1/bisections/" + std::to_string(id));
  EXPECT_EQ(b["state"], "culprit") << b.dump(2);
  EXPECT_EQ(b["culprit"], culprit) << b.dump(2);
  EXPECT_GT(b["change"].get<double>(), 0.075);
  EXPECT_GT(b["ci"][0].get<double>(), 0);
  // The bad endpoint was measured once: the resumed run went on from it.
  unsigned bad_probes = 0;
  for (const Json& p : b["probes"]) bad_probes += p["commit"] == commits.back() && p["attempt"] == 1;
  EXPECT_EQ(bad_probes, 1u) << b.dump(2);
  // Each commit just before a carrying one that the search measured is clean or the good endpoint.
  for (const Json& p : b["probes"]) {
    const auto at = std::find(commits.begin(), commits.end(), p["commit"].get<std::string>()) - commits.begin();
    if (p["verdict"] == "carries") EXPECT_GE(at, kCulpritCommit - 1) << p.dump();
    if (p["verdict"] == "clean") EXPECT_LT(at, kCulpritCommit - 1) << p.dump();
  }

  auto status = RunCommand({Bin("cli/perfgate"), "--token-file", token_file_, "bisect", "--http", Http(),
                            "--status", std::to_string(id)});
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->exit_code, 0) << status->output;
  EXPECT_NE(status->output.find("culprit " + culprit.substr(0, 12)), std::string::npos) << status->output;
}

TEST_F(BisectEndToEnd, TheSameHistoryWithoutTheSlowdownEndsWithNoCulprit) {
  const std::vector<std::string> commits = MakeRepo("flat", 0);
  auto r = RunCommand(BisectArgs(dir_->Join("flat"), commits), {}, std::chrono::minutes(10));
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << r->output;
  EXPECT_EQ(r->exit_code, 0) << r->output;
  const int64_t id = BisectionId(r->output);
  ASSERT_GT(id, 0);
  const Json b = GetJson("/api/v1/bisections/" + std::to_string(id));
  EXPECT_EQ(b["state"], "no_culprit") << b.dump(2);
  EXPECT_EQ(b["culprit"], "");
  EXPECT_NE(b["summary"].get<std::string>().find("no culprit"), std::string::npos);
  for (const std::string& c : commits) {
    EXPECT_EQ(r->output.find("culprit " + c.substr(0, 12)), std::string::npos) << r->output;
  }
}

TEST_F(BisectEndToEnd, EachRoundRunsAsAnSbatchArrayOnTheSlurmCluster) {
  if (absl::Status s = testing::SlurmCluster::CanRun(); !s.ok()) GTEST_SKIP() << s.message();
  auto cluster = testing::SlurmCluster::Start();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const std::vector<std::string> commits = MakeRepo("slurm", 15);
  std::vector<std::string> args = BisectArgs(dir_->Join("slurm"), commits);
  args.push_back("--slurm");
  testing::ProcessOptions options;
  options.env = (*cluster)->env();
  auto r = RunCommand(args, options, std::chrono::minutes(10));
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << r->output;
  EXPECT_EQ(r->exit_code, 0) << r->output << (*cluster)->LogTails();
  EXPECT_NE(r->output.find("sbatch array of 1 probe(s)"), std::string::npos);
  const Json b = GetJson("/api/v1/bisections/" + std::to_string(BisectionId(r->output)));
  EXPECT_EQ(b["state"], "culprit") << b.dump(2);
  EXPECT_EQ(b["culprit"], commits[kCulpritCommit - 1]) << b.dump(2);
}

}  // namespace
}  // namespace perfgate
