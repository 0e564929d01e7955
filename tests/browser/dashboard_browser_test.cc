// The dashboard in a real browser: a private PostgreSQL, the coordinator
// binary with HTTP on a loopback port, seeded history (40 runs of main with
// an 8 % step at c20, a five-node sweep with one slow node, a gated pull
// request), then dashboard.test.mjs drives Debian's Chromium through every
// view and triages the regression from the page; this test then reads the
// triage back from the database.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>

#include "tests/e2e/dashboard_seed.h"
#include "tests/support/postgres.h"
#include "tests/support/processes.h"

namespace perfgate {
namespace {

constexpr char kChromium[] = "/usr/bin/chromium";

class DashboardInBrowser : public testing::PostgresTest {};

TEST_F(DashboardInBrowser, ViewsShowThePlantedFactsAndTriageReachesTheDatabase) {
  if (!std::filesystem::exists(kChromium)) {
    GTEST_SKIP() << kChromium << " is missing: scripts/install-deps.sh installs the chromium package";
  }
  auto dir = testing::TempDir::Create("perfgate-browser-");
  ASSERT_TRUE(dir.ok()) << dir.status();
  const std::string token_file = dir->Join("token");
  std::ofstream(token_file) << "browser-token\n";
  auto coordinator = testing::StartDashboardCoordinator(ConnInfo(), dir->Join("coordinator.log"), token_file);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();
  auto seeded = testing::SeedDashboardHistory(coordinator->grpc.address, token_file);
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  ASSERT_TRUE(testing::WaitForRegressionChecks(coordinator->http_port, testing::kMainRuns + 6).ok());

  const nlohmann::json facts = {
      {"url", "http://127.0.0.1:" + std::to_string(coordinator->http_port)},
      {"chromium", kChromium},
      {"screenshots", PERFGATE_SCREENSHOT_DIR},
      {"token", "browser-token"},
      {"sku", testing::kSku},
      {"step_case", testing::kStepCase},
      {"step_commit", testing::kStepCommit},
      {"main_runs", testing::kMainRuns},
      {"fleet_case", testing::kFleetCase},
      {"sweep", testing::kSweep},
      {"outlier_node", testing::kOutlierNode},
      {"sweep_runs", seeded->sweep_runs},
      {"report_id", seeded->report_id},
      {"pr_run", seeded->pr_run}};
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

}  // namespace
}  // namespace perfgate
