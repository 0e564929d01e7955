#include "tests/e2e/dashboard_seed.h"

#include <httplib.h>

#include <chrono>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/coordinator_client.h"
#include "client/upload.h"
#include "common/count_metrics.h"
#include "common/identity.h"

namespace perfgate::testing {
namespace {

BenchmarkId ParseKey(const std::string& key) {
  auto id = ParseBenchmarkKey(key);
  return id.ok() ? *id : BenchmarkId{};
}

// 30 samples around `level` ms with 1 % Gaussian noise.
CaseResult Case(const std::string& key, double level, std::mt19937_64& rng) {
  CaseResult c;
  c.benchmark = ParseKey(key);
  c.metrics = {{"time", "ms", Direction::kLowerIsBetter}};
  std::normal_distribution<double> noise(0.0, 0.01);
  for (uint32_t i = 0; i < 30; ++i) c.samples.push_back({i, {level * (1.0 + noise(rng))}, false});
  c.status = CaseStatus::kOk;
  return c;
}

// The count of `key` (instructions an iteration) as a further part of the
// case, as `perfgate-agent run --count instructions` sends it: one sample
// numbered after the 30 timed ones.
CaseResult Counted(const std::string& key, double instructions) {
  CaseResult c;
  c.benchmark = ParseKey(key);
  c.metrics = {{kInstructionsMetric, "instr/iter", Direction::kLowerIsBetter}};
  c.samples.push_back({30, {instructions}, false});
  c.status = CaseStatus::kOk;
  return c;
}

RunMeta Meta(const std::string& branch, const std::string& commit, const std::string& node,
             const std::string& driver) {
  RunMeta m;
  m.run_id = NewUuid();
  m.agent_name = "agent-" + node;
  m.environment.sku = kSku;
  m.environment.fields = {{"driver", driver}, {"cuda", "12.4"}, {"gpu_name", "NVIDIA H100 80GB HBM3"}};
  m.branch = branch;
  m.commit = commit;
  m.trigger = Trigger::kCi;
  m.node = node;
  m.started_at = std::chrono::system_clock::now();
  return m;
}

absl::Status Send(client::CoordinatorClient& client, const RunMeta& meta, const std::vector<CaseResult>& cases) {
  auto upload = client::RunUpload::Create(client, meta);
  if (!upload.ok()) return upload.status();
  if (auto s = upload->Register(meta.node, "test"); !s.ok()) return s;
  auto stored = upload->SendWhole(cases);
  return stored.status();
}

}  // namespace

void DashboardCoordinatorTest::SetUp() {
  PostgresDirTest::SetUp();
  if (HasFatalFailure()) return;
  token_file_ = WriteTokenFile(token_);
  auto started = StartDashboardCoordinator(ConnInfo(), dir_->Join("coordinator.log"), token_file_);
  ASSERT_TRUE(started.ok()) << started.status();
  coordinator_ = std::move(*started);
}

nlohmann::json DashboardCoordinatorTest::GetJson(const std::string& path) const {
  httplib::Client http("127.0.0.1", coordinator_.http_port);
  http.set_bearer_token_auth(token_);
  auto res = http.Get(path.c_str());
  EXPECT_TRUE(res) << path;
  if (!res) return {};
  EXPECT_EQ(res->status, 200) << path << ": " << res->body;
  return nlohmann::json::parse(res->body);
}

absl::StatusOr<DashboardCoordinator> StartDashboardCoordinator(const std::string& conninfo,
                                                               const std::string& log_path,
                                                               const std::string& token_file,
                                                               const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"--http-listen", "127.0.0.1:0", "--token-file", token_file};
  args.insert(args.end(), extra.begin(), extra.end());
  auto grpc = StartCoordinator(conninfo, log_path, args);
  if (!grpc.ok()) return grpc.status();
  // The HTTP address is printed before "listening on", which StartCoordinator waited for.
  const std::string log = grpc->process->Output();
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(R"(dashboard at http://127\.0\.0\.1:(\d+)/)"))) {
    return absl::InternalError("the coordinator printed no dashboard address: " + log);
  }
  DashboardCoordinator out;
  out.http_port = std::stoi(m[1]);
  out.grpc = *std::move(grpc);
  return out;
}

absl::Status WaitForRegressionChecks(int http_port, int runs, const std::string& token) {
  httplib::Client http("127.0.0.1", http_port);
  http.set_bearer_token_auth(token);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::string last;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto res = http.Get("/metrics"); res && res->status == 200) {
      std::smatch m;
      last = res->body;
      if (std::regex_search(last, m, std::regex(R"(perfgate_regression_checks_total (\d+))")) &&
          std::stoi(m[1]) >= runs) {
        return absl::OkStatus();
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat("fewer than ", runs, " runs checked in 60 s:\n", last));
}

absl::StatusOr<Seeded> SeedDashboardHistory(const std::string& address, const std::string& token_file) {
  auto options = client::MakeClientOptions(address, token_file, 30);
  if (!options.ok()) return options.status();
  client::CoordinatorClient client(*options);
  std::mt19937_64 rng(16);
  Seeded out;
  for (int i = 0; i < kMainRuns; ++i) {
    const RunMeta meta = Meta("main", absl::StrFormat("c%02d", i), "gpu-node-01", "550.54.15");
    const double step = i >= 20 ? 1.08 : 1.0;
    if (auto s = Send(client, meta, {Case(kStepCase, 2.5 * step, rng), Case(kFlatCase, 0.9, rng)}); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("main run ", i, ": ", s.message()));
    }
    out.main_runs.push_back(meta.run_id);
  }
  for (int n = 1; n <= 5; ++n) {
    const std::string node = absl::StrFormat("gpu-node-%02d", n);
    const bool outlier = node == kOutlierNode;
    RunMeta meta = Meta("main", "c39", node, outlier ? "535.104.05" : "550.54.15");
    meta.trigger = Trigger::kSweep;
    meta.ci_job = kSweep;
    if (auto s = Send(client, meta, {Case(kFleetCase, outlier ? 13.0 : 10.0, rng), Case(kFlatCase, 0.9, rng)});
        !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("sweep run on ", node, ": ", s.message()));
    }
    out.sweep_runs.push_back(meta.run_id);
  }
  const RunMeta pr = Meta("pr-1234", "p01", "gpu-node-01", "550.54.15");
  if (auto s = Send(client, pr,
                    {Case(kStepCase, 2.5 * 1.08 * 1.1, rng), Case(kFlatCase, 0.9, rng), Counted(kFlatCase, kPrCount)});
      !s.ok()) {
    return s;
  }
  out.pr_run = pr.run_id;
  v1::EvaluateRequest req;
  req.set_candidate_run_id(pr.run_id);
  req.set_baseline_branch("main");
  req.set_policy_yaml("version: 1\n");
  req.set_policy_name("policy.yaml");
  auto report = client.Evaluate(req);
  if (!report.ok()) return report.status();
  out.report_id = report->report_id();
  return out;
}

}  // namespace perfgate::testing
