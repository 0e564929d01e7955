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

#include "common/identity.h"
#include "coordinator/domain/notification_events.h"
#include "coordinator/store.h"
#include "perfgate/v1/bisection.pb.h"
#include "tests/e2e/dashboard_seed.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"
#include "wire/api_json.h"

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

class BisectEndToEnd : public testing::DashboardCoordinatorTest {
 protected:
  BisectEndToEnd() : DashboardCoordinatorTest(kToken) {}

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

  // A regression of gbench/BM_Work real_time on main from the first commit
  // to the last, stored as the coordinator's watcher stores one.
  int64_t StoreRegression(const std::vector<std::string>& commits) {
    auto store = coordinator::Store::Connect(ConnInfo(), 1);
    EXPECT_TRUE(store.ok()) << store.status();
    if (!store.ok()) return 0;
    EXPECT_TRUE((*store)->RegisterAgent("nightly", "node-1", "0.1.0").ok());
    RunMeta run;
    run.run_id = NewUuid();
    run.agent_name = "nightly";
    run.environment.sku = "cpu-test";
    run.branch = "main";
    run.commit = commits.back();
    run.trigger = Trigger::kCi;
    EXPECT_TRUE((*store)->OpenRun(run).ok());
    coordinator::store::DetectedRegression d;
    coordinator::store::Regression& r = d.regression;
    r.benchmark = "gbench/BM_Work";
    r.metric = "real_time";
    r.sku = "cpu-test";
    r.branch = "main";
    r.good_commit = commits.front();
    r.bad_commit = commits.back();
    r.first_bad_run_id = run.run_id;
    r.change = 0.15;
    d.detected_after_run_id = run.run_id;
    auto saved = (*store)->SaveDetectedRegression(d, coordinator::RegressionFound);
    EXPECT_TRUE(saved.ok() && saved->has_value()) << saved.status();
    return saved.ok() && saved->has_value() ? (*saved)->id : 0;
  }

  // `perfgate bisect` of the range (--good first --bad last), or of the
  // stored regression `regression` when it is not 0.
  std::vector<std::string> BisectArgs(const std::string& repo, const std::vector<std::string>& commits,
                                      int64_t regression = 0) {
    std::vector<std::string> what = {"--good", commits.front(), "--bad", commits.back()};
    if (regression != 0) what = {std::to_string(regression)};
    std::vector<std::string> args = {Bin("cli/perfgate"), "--token-file", token_file_, "bisect", "--http", Http()};
    args.insert(args.end(), what.begin(), what.end());
    std::vector<std::string> rest = {"--repo", repo,
            "--work-dir", repo + ".work",
            "--build", "g++ -O2 -o {artifact}/bench bench.cc -lbenchmark -lpthread",
            "--cmd", "{artifact}/bench --benchmark_repetitions={samples} --benchmark_min_time=0.05 "
                     "--benchmark_out={out} --benchmark_out_format=json",
            "--agent", Bin("agent/perfgate-agent"), "--ab-arg=--block-time=0.3", "--ab-arg=--block-timeout=120",
            "--case-budget", "40"};
    args.insert(args.end(), rest.begin(), rest.end());
    return args;
  }

  std::string Http() const { return "127.0.0.1:" + std::to_string(coordinator_.http_port); }

  /// GET /api/v1/bisections/ID, read as its message (the API's JSON).
  v1::Bisection GetBisection(int64_t id) const {
    v1::Bisection b;
    const absl::Status read =
        wire::FromApiJson(GetJson("/api/v1/bisections/" + std::to_string(id)).dump(), &b, "bisection");
    EXPECT_TRUE(read.ok()) << read;
    return b;
  }

  static int64_t BisectionId(const std::string& output) {
    std::smatch m;
    if (!std::regex_search(output, m, std::regex(R"(bisection (\d+):)"))) return 0;
    return std::stoll(m[1]);
  }

};

}  // namespace perfgate
