// The dashboard in a real browser: a private PostgreSQL, the coordinator
// binary with HTTP on a loopback port and --require-credentials, seeded
// history (40 runs of main with an 8 % step at c20, a five-node sweep with
// one slow node, a gated pull request), then dashboard.test.mjs signs in
// through the page's token box, drives Debian's Chromium through every view
// and triages the regression from the page; this test then reads the
// triage back from the database.
//
// Screenshots go to the build tree; PERFGATE_UPDATE_SCREENSHOTS=1 writes
// them over docs/dashboard/*.png instead.
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "tests/e2e/dashboard_seed.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate::dashboard_browser_test {
namespace {

constexpr char kChromium[] = "/usr/bin/chromium";

std::string ScreenshotDir() {
  const char* update = std::getenv("PERFGATE_UPDATE_SCREENSHOTS");
  if (update != nullptr && std::string(update) == "1") return PERFGATE_DOCS_SCREENSHOT_DIR;
  std::filesystem::create_directories(PERFGATE_SCREENSHOT_DIR);
  return PERFGATE_SCREENSHOT_DIR;
}

// A credential of `role` issued by `perfgate-coordinator credentials issue`; its token.
std::string Issue(const std::string& conninfo, const testing::TempDir& dir, const std::string& name,
                  const std::string& role) {
  const std::string path = dir.Join(name + ".token");
  auto r = testing::RunCommand({testing::Bin("coordinator/perfgate-coordinator"), "--database", conninfo,
                                "credentials", "issue", name, "--role", role, "--output", path});
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->output : r.status().ToString());
  auto text = testing::ReadFile(path);
  return text.ok() ? text->substr(0, text->find('\n')) : "";
}

class DashboardInBrowser : public testing::PostgresTest {};

TEST_F(DashboardInBrowser, ViewsShowThePlantedFactsAndTriageReachesTheDatabase) {
  if (!std::filesystem::exists(kChromium)) {
    GTEST_SKIP() << kChromium << " is missing: scripts/install-deps.sh installs the chromium package";
  }
  auto dir = testing::TempDir::Create("perfgate-browser-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string token_file = dir->Join("token");
  std::ofstream(token_file) << "browser-token\n";
  const std::string read_token = Issue(ConnInfo(), *dir, "dashboard", "read");
  const std::string gate_token = Issue(ConnInfo(), *dir, "triager", "gate");
  ASSERT_FALSE(read_token.empty() || gate_token.empty());
  auto coordinator = testing::StartDashboardCoordinator(ConnInfo(), dir->Join("coordinator.log"), token_file,
                                                        {"--require-credentials"});
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  auto seeded = testing::SeedDashboardHistory(coordinator->grpc.address, token_file);
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  ASSERT_TRUE(testing::WaitForRegressionChecks(coordinator->http_port, testing::kMainRuns + 6, read_token).ok());

  const nlohmann::json facts = {
      {"url", "http://127.0.0.1:" + std::to_string(coordinator->http_port)},
      {"chromium", kChromium},
      {"screenshots", ScreenshotDir()},
      {"read_token", read_token},
      {"gate_token", gate_token},
      {"sku", testing::kSku},
      {"step_case", testing::kStepCase},
      {"step_commit", testing::kStepCommit},
      {"main_runs", testing::kMainRuns},
      {"fleet_case", testing::kFleetCase},
      {"sweep", testing::kSweep},
      {"outlier_node", testing::kOutlierNode},
      {"sweep_runs", seeded->sweep_runs},
      {"report_id", seeded->report_id},
      {"pr_run", seeded->pr_run},
      {"flat_case", testing::kFlatCase},
      {"pr_count", testing::kPrCount}};
  auto r = testing::RunCommand({PERFGATE_NODE, PERFGATE_BROWSER_SCRIPT, facts.dump()}, {},
                               std::chrono::seconds(90));
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << r->output;
  ASSERT_EQ(r->exit_code, 0) << r->output << "\n--- coordinator ---\n" << coordinator->grpc.process->OutputTail();

  pqxx::connection c(ConnInfo());
  pqxx::work txn(c);
  const pqxx::result reg = txn.exec("SELECT id, state, benchmark, bad_commit FROM regressions");
  ASSERT_EQ(reg.size(), 1u);
  EXPECT_EQ(reg[0][1].as<std::string>(), "acknowledged");
  EXPECT_EQ(reg[0][2].as<std::string>(), testing::kStepCase);
  EXPECT_EQ(reg[0][3].as<std::string>(), testing::kStepCommit);
  const pqxx::result ev = txn.exec_params(
      "SELECT actor, note, to_state FROM regression_events WHERE regression_id = $1 ORDER BY id DESC LIMIT 1",
      reg[0][0].as<int64_t>());
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0][0].as<std::string>(), "browser-test");
  EXPECT_EQ(ev[0][1].as<std::string>(), "triaged from the page");
  EXPECT_EQ(ev[0][2].as<std::string>(), "acknowledged");
}

// Complete runs of main for the rows of temp table `fill` (id, g, started),
// commits `prefix` and g, on the seeded runs' agent, environment and SKU.
std::string InsertFillRuns(const std::string& fill, const std::string& prefix) {
  return absl::StrCat(R"sql(
INSERT INTO runs (id, agent_id, environment_id, sku, branch, commit, trigger, node, started_at,
                  finished_at, status)
SELECT f.id, s.agent_id, s.environment_id, s.sku, 'main', ')sql", prefix, R"sql(' || lpad(f.g::text, 5, '0'), 'ci',
       'gpu-node-0' || (f.g % 5 + 1), f.started, f.started + interval '1 minute', 'complete'
FROM )sql", fill, R"sql( f, (SELECT agent_id, environment_id, sku FROM runs WHERE branch = 'main' LIMIT 1) s;
)sql");
}

// A million samples for the load measurement (docs/dashboard.md): 1000 more
// runs of main before the seeded ones, each with both main cases, 500
// samples a case, summaries and batches as CloseRun would leave them.
constexpr char kMillionRuns[] = R"sql(
CREATE TEMP TABLE fill AS
SELECT gen_random_uuid() AS id, g, now() - interval '1 hour' * (2000 - g) AS started
FROM generate_series(1, 1000) g;
)sql";
constexpr char kMillionSamples[] = R"sql(
CREATE TEMP TABLE fill_metrics AS
SELECT m.id AS metric_id, m.benchmark_id, CASE WHEN b.key LIKE 'collectives/%' THEN 2.5 ELSE 0.9 END AS level
FROM metrics m JOIN benchmarks b ON b.id = m.benchmark_id
WHERE b.key IN ('collectives/all_reduce{bytes=268435456}', 'kernels/sgemm{k=4096}');
INSERT INTO run_cases (run_id, benchmark_id, status) SELECT DISTINCT f.id, m.benchmark_id, 'ok' FROM fill f, fill_metrics m;
INSERT INTO batches (run_id, sequence, sample_count) SELECT id, 1, 1000 FROM fill;
INSERT INTO samples (run_id, benchmark_id, metric_id, idx, value)
SELECT f.id, m.benchmark_id, m.metric_id, i, m.level * (1 + 0.01 * (random() - 0.5))
FROM fill f, fill_metrics m, generate_series(0, 499) i;
INSERT INTO summaries (run_id, metric_id, n, n_throttled, median, mean, stdev, min, max, noise, mad, p5, p95)
SELECT s.run_id, s.metric_id, count(*), 0,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY value), avg(value), stddev(value), min(value),
       max(value), stddev(value) / avg(value), 0,
       percentile_cont(0.05) WITHIN GROUP (ORDER BY value), percentile_cont(0.95) WITHIN GROUP (ORDER BY value)
FROM samples s JOIN fill f ON f.id = s.run_id GROUP BY s.run_id, s.metric_id;
INSERT INTO series_points (run_id, metric_id, finished_at, sku, branch, node, commit, median, p5, p95, n,
                           n_throttled, invalid)
SELECT r.id, s.metric_id, r.finished_at, r.sku, r.branch, r.node, r.commit, s.median, s.p5, s.p95, s.n,
       s.n_throttled, false
FROM summaries s JOIN runs r ON r.id = s.run_id JOIN fill f ON f.id = r.id;
ANALYZE;
)sql";

// A series of 10 000 runs for the long-series load (docs/dashboard.md): 9 000
// older runs of main with the all_reduce case's summary and series point
// only (what a series reads), a level shift of +6 % 3 000 runs from the end.
constexpr char kLongRuns[] = R"sql(
CREATE TEMP TABLE long_fill AS
SELECT gen_random_uuid() AS id, g, now() - interval '3000 hours' - interval '2 minutes' * (9000 - g) AS started
FROM generate_series(1, 9000) g;
)sql";
constexpr char kLongSeries[] = R"sql(
CREATE TEMP TABLE long_metric AS
SELECT m.id AS metric_id FROM metrics m JOIN benchmarks b ON b.id = m.benchmark_id
WHERE b.key = 'collectives/all_reduce{bytes=268435456}' AND m.name = 'time';
INSERT INTO summaries (run_id, metric_id, n, n_throttled, median, mean, stdev, min, max, noise, mad, p5, p95)
SELECT f.id, m.metric_id, 500, 0, v, v, 0.01 * v, 0.98 * v, 1.02 * v, 0.01, 0, 0.99 * v, 1.01 * v
FROM long_fill f, long_metric m,
     LATERAL (SELECT 2.5 * (CASE WHEN f.g > 6000 THEN 1.06 ELSE 1 END) * (1 + 0.01 * (random() - 0.5)) AS v) x;
INSERT INTO series_points (run_id, metric_id, finished_at, sku, branch, node, commit, median, p5, p95, n,
                           n_throttled, invalid)
SELECT r.id, s.metric_id, r.finished_at, r.sku, r.branch, r.node, r.commit, s.median, s.p5, s.p95, s.n, 0, false
FROM summaries s JOIN runs r ON r.id = s.run_id JOIN long_fill f ON f.id = r.id;
ANALYZE;
)sql";

// Not part of the suite: run with --gtest_also_run_disabled_tests to measure
// the page load times written in docs/dashboard.md.
TEST_F(DashboardInBrowser, DISABLED_PageLoadWithAMillionSamples) {
  auto dir = testing::TempDir::Create("perfgate-load-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string token_file = dir->Join("token");
  std::ofstream(token_file) << "load-token\n";
  auto coordinator = testing::StartDashboardCoordinator(ConnInfo(), dir->Join("coordinator.log"), token_file);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  auto seeded = testing::SeedDashboardHistory(coordinator->grpc.address, token_file);
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  ASSERT_TRUE(testing::WaitForRegressionChecks(coordinator->http_port, testing::kMainRuns + 6, "load-token").ok());
  {
    pqxx::connection c(ConnInfo());
    pqxx::work txn(c);
    txn.exec(kMillionRuns);
    txn.exec(InsertFillRuns("fill", "f"));
    txn.exec(kMillionSamples);
    txn.exec(kLongRuns);
    txn.exec(InsertFillRuns("long_fill", "l"));
    txn.exec(kLongSeries);
    txn.commit();
    pqxx::work check(c);
    std::cout << "samples stored: " << check.exec("SELECT count(*) FROM samples")[0][0].as<int64_t>()
              << ", runs: " << check.exec("SELECT count(*) FROM runs")[0][0].as<int64_t>() << "\n";
  }
  const std::string series = std::string("#/series?benchmark=") +
                             "collectives%2Fall_reduce%7Bbytes%3D268435456%7D&metric=time&sku=" + testing::kSku +
                             "&branch=main";
  const nlohmann::json args = {
      {"url", "http://127.0.0.1:" + std::to_string(coordinator->http_port)},
      {"chromium", kChromium},
      {"token", "load-token"},
      {"views",
       {{"runs", "#/runs"},
        {"series", series},
        {"series of 10 000 runs", series + "&limit=10000"},
        {"compare", "#/compare?base=" + seeded->sweep_runs[0] + "&cand=" + seeded->sweep_runs[3]},
        {"fleet", std::string("#/fleet?sku=") + testing::kSku + "&sweep=" + testing::kSweep},
        {"report", "#/report/" + std::to_string(seeded->report_id)},
        {"regressions", "#/regressions"}}}};
  // The API alone, as the views call it: median of five answers, milliseconds.
  httplib::Client http("127.0.0.1", coordinator->http_port);
  http.set_bearer_token_auth("load-token");
  const std::string sweep_runs = seeded->sweep_runs[0] + "&cand=" + seeded->sweep_runs[3];
  for (const std::string& path :
       {std::string("/api/v1/catalog"), std::string("/api/v1/runs?limit=200"),
        std::string("/api/v1/series?benchmark=collectives%2Fall_reduce%7Bbytes%3D268435456%7D&metric=time&sku=") +
            testing::kSku + "&branch=main&limit=100",
        std::string("/api/v1/series?benchmark=collectives%2Fall_reduce%7Bbytes%3D268435456%7D&metric=time&sku=") +
            testing::kSku + "&branch=main&limit=10000&points=1000",
        "/api/v1/compare?base=" + sweep_runs, std::string("/api/v1/fleet?sku=") + testing::kSku + "&sweep=" +
            testing::kSweep,
        std::string("/api/v1/regressions?limit=200")}) {
    std::vector<double> ms;
    for (int i = 0; i < 5; ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto res = http.Get(path.c_str());
      ASSERT_TRUE(res && res->status == 200) << path;
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    std::cout << "api " << path << ": " << ms[2] << " ms\n";
  }
  auto r = testing::RunCommand({PERFGATE_NODE, PERFGATE_MEASURE_SCRIPT, args.dump()}, {}, std::chrono::minutes(5));
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << r->output;
  ASSERT_EQ(r->exit_code, 0) << r->output;
}

}  // namespace
}  // namespace perfgate::dashboard_browser_test
