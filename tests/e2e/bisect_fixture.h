// The fixture of the `perfgate bisect` end-to-end tests (bisect_e2e_test.cc,
// bisect_slurm_test.cc): the real coordinator over a private PostgreSQL,
// and a real git repository of 16 commits of a small Google Benchmark
// program in which one commit adds work (real iterations of a work loop,
// so that the slowdown is certain on a noisy machine), built per commit by
// g++ in a worktree and measured by the real `perfgate-agent ab`.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/e2e/dashboard_seed.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate {

using Json = nlohmann::json;
using testing::Bin;
using testing::RunCommand;


using testing::Bin;
using testing::RunCommand;

inline constexpr char kToken[] = "bisect-token";
inline constexpr int kCommits = 16;
inline constexpr int kCulpritCommit = 11;  // 1-based: commit 11 adds the work

inline constexpr char kBench[] = R"(// A work loop: kExtraPercent more iterations make it that much slower.
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
                                        << "inline constexpr int kExtraPercent = " << extra << ";\n";
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

}  // namespace perfgate
