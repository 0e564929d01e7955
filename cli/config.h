// `perfgate`'s command line: one Config for every subcommand, the CLI11 app
// that fills it (built one subcommand at a time, in config.cc), and the
// checks made before any server is asked: a policy file that cannot be read
// or parsed, an unknown --mode, an A/B gate without its baseline run, a
// `compare` given neither A B nor --baseline/--candidate lists.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cli/bisect_probe.h"
#include "cli/compare.h"
#include "cli/ingest.h"
#include "client/coordinator_client.h"
#include "common/run_types.h"
#include "gate/policy.h"
#include "gate/simulate.h"
#include "gate/simulate_tail.h"
#include "report/gate_report.h"

namespace perfgate::cli {

/// The subcommands of `perfgate`.
enum class Command {
  kGate,
  kReport,
  kSimulate,
  kRuns,
  kRun,
  kHistory,
  kFleet,
  kCalibrations,
  kHealth,
  kIngest,
  kCompare,
  kRegressions,
  kTriage,
  kExport,
  kBisect,
};

/// Everything the command line says, for whichever subcommand it names.
struct Config {
  Command command = Command::kHealth;
  std::string coordinator = "127.0.0.1:50051";  // --coordinator, PERFGATE_COORDINATOR
  double timeout_s = 60;                        // --timeout: each coordinator call's deadline
  // --token-file and the TLS options; ValidateConfig reads their files into
  // `client` for every command that asks the coordinator
  client::ConnectionFlags connection;
  client::ClientOptions client;
  // gate
  std::string run_id, baseline_branch = "main", baseline_commit, policy_file;
  std::string mode_name = "history", baseline_run_id;  // --mode as given
  gate::Mode mode = gate::Mode::kHistory;              // it parsed by ValidateConfig
  // report
  int64_t report_id = 0;
  // gate, report, history, fleet: extra renderings, when set
  std::string markdown_file, junit_file, json_file;
  // gate, report: the pull request's job summary, comment and check run
  report::PullRequestFiles pr;
  // simulate: sim as given; ValidateConfig sets its modes, noise levels and bursts
  gate::SimulationOptions sim;
  std::vector<std::string> sim_modes = {"single", "history", "ab", "ab-fixed", "files"};
  std::vector<double> sim_noise_pct = {0.5, 1, 2, 5};
  double sim_burst_sample_pct = 5, sim_burst_process_pct = 10;
  double sim_slow_cpu_pct = 0;
  std::string sim_out;
  // simulate --tail: the heavy-tailed serving model instead (gate/simulate_tail.h)
  bool sim_tail = false;
  gate::TailSimulationOptions sim_tail_options;
  // runs, history, fleet, calibrations
  std::string branch, sku, benchmark, metric;
  unsigned limit = 0;
  std::string sweep, node;
  double k = 5;
  // history --from/--to as given (seconds since the epoch or RFC 3339);
  // ValidateConfig reads them into history_from/history_to
  std::string from_text, to_text;
  std::optional<TimePoint> history_from, history_to;
  // regressions, triage: over the coordinator's HTTP API (--http)
  std::string http = "127.0.0.1:8080";
  std::string state, note, by, commit;
  int64_t regression_id = 0;
  // export: result files of any readable format, written as --format
  std::string export_format = "bmf";
  std::vector<std::string> export_files;
  std::string export_output;  // stdout when empty
  std::string export_input_format;  // --input-format: the files' format; detected when empty
  // bisect (docs/bisect.md): a stored regression (regression_id), or
  // --good/--bad; --status or --resume of a stored bisection
  std::string good, bad;
  std::string good_image, bad_image;  // bisect --good-image/--bad-image: a stack upgrade
  int64_t bisect_status = 0, bisect_resume = 0;
  BisectSettings bisect;
  std::string bisect_case, bisect_metric;
  double bisect_min_change_pct = 5;
  unsigned bisect_attempts = 3, bisect_per_round = 1;
  // compare and ingest keep their own options; ValidateConfig gives them
  // the coordinator and the timeout
  CompareOptions compare;
  IngestOptions ingest;
  /// Read by ValidateConfig for gate, simulate and calibrations (the
  /// default policy when no --policy is given).
  gate::PolicyFile policy;
};

/// Parses the command line into `config` and validates it (ValidateConfig).
/// Returns std::nullopt when config.command is to run; otherwise the exit
/// code to leave with at once: 0 after --help, 2 on an error, told on `err`
/// (CLI11's message, or "perfgate: <reason>").
std::optional<int> ParseCommandLine(int argc, const char* const* argv, Config& config,
                                    std::ostream& out, std::ostream& err);

/// The checks of config.command that need no server; reads the policy file
/// and completes the simulation's and compare's and ingest's options. The
/// error's message is the reason, without the "perfgate: " prefix.
absl::Status ValidateConfig(Config& config);

}  // namespace perfgate::cli
