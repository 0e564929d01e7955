// Seeded history for the regression and dashboard tests, sent through the
// real client library to a running coordinator (so the coordinator's own
// regression watcher sees every close):
//  * 40 runs of main on SKU kSku, commits c00..c39, each with two cases:
//    kStepCase, whose time steps up 8 % from commit c20 (kStepCommit), and
//    kFlatCase, which holds its level; 1 % noise, seeded;
//  * one sweep (ci job kSweep) of five nodes of kSku in which kOutlierNode
//    is 30 % slower in kFleetCase and differs in the "driver" field;
//  * one pull-request run gated against main (a stored gate report), whose
//    kFlatCase also carries its count (kPrCount instructions an iteration)
//    as a further part, as `perfgate-agent run --count` sends it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "tests/support/coordinator.h"
#include "tests/support/postgres.h"

namespace perfgate::testing {

inline constexpr char kSku[] = "h100-sxm5-80gb";
inline constexpr char kStepCase[] = "collectives/all_reduce{bytes=268435456}";
inline constexpr char kFlatCase[] = "kernels/sgemm{k=4096}";
inline constexpr char kFleetCase[] = "kernels/triad{bytes=268435456}";
inline constexpr char kStepCommit[] = "c20";
inline constexpr int kMainRuns = 40;
inline constexpr char kSweep[] = "sweep-7";
inline constexpr char kOutlierNode[] = "gpu-node-04";
inline constexpr double kPrCount = 1234567;

struct Seeded {
  std::vector<std::string> main_runs;   // oldest first
  std::vector<std::string> sweep_runs;  // node 01..05
  std::string pr_run;
  long long report_id = 0;
};

/// The coordinator with HTTP on a free loopback port and a shared bearer
/// token (role admin), with `extra` options (e.g. --require-credentials).
struct DashboardCoordinator {
  RunningCoordinator grpc;
  int http_port = 0;
};
absl::StatusOr<DashboardCoordinator> StartDashboardCoordinator(const std::string& conninfo,
                                                               const std::string& log_path,
                                                               const std::string& token_file,
                                                               const std::vector<std::string>& extra = {});

/// A private PostgreSQL with a token file holding `token` and a dashboard
/// coordinator started with it (token_file_, coordinator_).
class DashboardCoordinatorTest : public PostgresDirTest {
 protected:
  explicit DashboardCoordinatorTest(std::string token) : token_(std::move(token)) {}
  void SetUp() override;
  /// GET `path` from the coordinator's HTTP side with the token: its JSON
  /// body, after expecting 200.
  nlohmann::json GetJson(const std::string& path) const;

  std::string token_, token_file_;
  DashboardCoordinator coordinator_;
};

/// Polls GET /metrics (sending `token`) until perfgate_regression_checks_total
/// reaches `runs` (every closed run checked) or 60 s pass.
absl::Status WaitForRegressionChecks(int http_port, int runs, const std::string& token);

/// Sends everything above to the coordinator at `address`.
absl::StatusOr<Seeded> SeedDashboardHistory(const std::string& address, const std::string& token_file);

}  // namespace perfgate::testing
