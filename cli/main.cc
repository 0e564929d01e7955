// perfgate: the command a CI step or a person runs against a coordinator —
// gate a candidate run, compare two runs or result files, list runs, show one
// run, print a metric's history with its change points, name the outlier
// nodes of a sweep, list the nodes' calibrated noise floors.
#include <CLI/CLI.hpp>

#include <cmath>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "cli/calibrations.h"
#include "cli/compare.h"
#include "cli/ingest.h"
#include "client/coordinator_client.h"
#include "gate/policy.h"
#include "gate/simulate.h"
#include "wire/gate_convert.h"
#include "wire/query_convert.h"
#include "report/fleet.h"
#include "report/gate_report.h"
#include "report/history.h"

namespace {

using perfgate::client::CoordinatorClient;

constexpr int kExitError = 2;

struct Config {
  std::string coordinator = "127.0.0.1:50051";
  double timeout_s = 60;
  // gate
  std::string run_id, baseline_branch = "main", baseline_commit, policy_file;
  std::string mode = "history", baseline_run_id;
  int64_t report_id = 0;
  // simulate
  perfgate::gate::SimulationOptions sim;
  std::vector<std::string> sim_modes = {"single", "history", "ab", "ab-fixed", "files"};
  std::vector<double> sim_noise_pct = {0.5, 1, 2, 5};
  double sim_burst_sample_pct = 5, sim_burst_process_pct = 10;
  std::string sim_out;
  std::string markdown_file, junit_file, json_file;
  // runs / history
  std::string branch, sku, benchmark, metric;
  unsigned limit = 0;
  // fleet, calibrations (node)
  std::string sweep, node;
  double k = 5;
};

// The coordinator's client: the commands below send no token, and each call
// ends by --timeout.
perfgate::client::ClientOptions CoordinatorOptions(const Config& c) {
  perfgate::client::ClientOptions o;
  o.address = c.coordinator;
  o.timeout_s = c.timeout_s;
  return o;
}

int RpcError(const absl::Status& s, const char* call, const std::string& address) {
  std::cerr << "perfgate: " << call << " failed: " << s.message();
  if (s.code() == absl::StatusCode::kUnavailable) {
    std::cerr << " (is a coordinator listening on " << address << "? set --coordinator or PERFGATE_COORDINATOR)";
  }
  std::cerr << "\n";
  return kExitError;
}

// The coordinator answered with something this command cannot read (a newer
// coordinator's verdict, a malformed message).
int BadAnswer(const absl::Status& s, const char* call) {
  std::cerr << "perfgate: " << call << ": the coordinator's answer cannot be read: " << s.message() << "\n";
  return kExitError;
}

bool WriteFile(const std::string& path, const std::string& text) {
  if (path.empty()) return true;
  std::ofstream out(path);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "perfgate: cannot write " << path << "\n";
    return false;
  }
  return true;
}

// Shows a report the coordinator sent, as `gate` and `report` do: the table,
// after a gate where it is stored, the report files; returns the gate's exit code.
int ShowReport(const perfgate::v1::GateReport& sent, const Config& c, const char* call, bool announce) {
  auto report = perfgate::wire::FromProto(sent);
  if (!report.ok()) return BadAnswer(report.status(), call);
  std::cout << perfgate::report::RenderTable(*report);
  if (announce && report->report_id > 0) {
    std::cout << "report " << report->report_id << " stored; `perfgate report "
              << report->report_id << "` shows it again\n";
  }
  if (auto w = perfgate::report::WriteReportFiles(*report, c.markdown_file, c.junit_file, c.json_file);
      !w.ok()) {
    std::cerr << "perfgate: " << w.message() << "\n";
    return kExitError;
  }
  return perfgate::report::ExitCode(*report);
}

int Gate(const Config& c) {
  auto policy = perfgate::gate::ReadPolicyFile(c.policy_file);
  if (!policy.ok()) {
    std::cerr << "perfgate: " << policy.status().message() << "\n";
    return kExitError;
  }
  perfgate::v1::EvaluateRequest req;
  req.set_candidate_run_id(c.run_id);
  if (c.mode == "ab") {
    if (c.baseline_run_id.empty()) {
      std::cerr << "perfgate: --mode ab needs --baseline-run, the run of the baseline side\n";
      return kExitError;
    }
    req.set_mode(perfgate::v1::GATE_MODE_AB);
    req.set_baseline_run_id(c.baseline_run_id);
  } else {
    req.set_mode(perfgate::v1::GATE_MODE_HISTORY);
  }
  req.set_baseline_branch(c.baseline_branch);
  req.set_baseline_commit(c.baseline_commit);
  req.set_policy_yaml(policy->text);
  req.set_policy_name(c.policy_file);
  CoordinatorClient coordinator(CoordinatorOptions(c));
  auto report = coordinator.Evaluate(req);
  if (!report.ok()) return RpcError(report.status(), "gate", c.coordinator);
  return ShowReport(*report, c, "gate", /*announce=*/true);
}

int Report(const Config& c) {
  CoordinatorClient coordinator(CoordinatorOptions(c));
  auto report = coordinator.GetReport(c.report_id);
  if (!report.ok()) return RpcError(report.status(), "report", c.coordinator);
  return ShowReport(*report, c, "report", /*announce=*/false);
}

int Simulate(const Config& c) {
  auto policy_file = perfgate::gate::ReadPolicyFile(c.policy_file);
  if (!policy_file.ok()) {
    std::cerr << "perfgate: " << policy_file.status().message() << "\n";
    return kExitError;
  }
  const perfgate::gate::Policy& policy = policy_file->policy;
  perfgate::gate::SimulationOptions o = c.sim;
  o.modes.clear();
  for (const std::string& name : c.sim_modes) {
    perfgate::gate::SimMode m;
    if (!perfgate::gate::ParseSimMode(name, &m)) {
      std::cerr << "perfgate: unknown mode '" << name
                << "' (expected single, history, ab, ab-fixed or files)\n";
      return kExitError;
    }
    o.modes.push_back(m);
  }
  o.noise_levels.clear();
  for (double pct : c.sim_noise_pct) o.noise_levels.push_back(pct / 100);
  o.burst_sample = c.sim_burst_sample_pct / 100;
  o.burst_process = c.sim_burst_process_pct / 100;
  const std::string table =
      perfgate::gate::RenderSimulation(o, policy, perfgate::gate::Simulate(o, policy));
  std::cout << table;
  return WriteFile(c.sim_out, table) ? 0 : kExitError;
}

std::string Time(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0) return "-";
  std::time_t secs = t.seconds();
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::gmtime(&secs));
  return buf;
}

int Runs(const Config& c) {
  perfgate::v1::ListRunsRequest req;
  req.set_branch(c.branch);
  req.set_sku(c.sku);
  req.set_limit(c.limit);
  CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.ListRuns(req);
  if (!resp.ok()) return RpcError(resp.status(), "runs", c.coordinator);
  std::cout << absl::StrFormat("%-36s  %-19s  %-20s  %-12s  %-18s  %-9s %8s\n", "run", "finished (UTC)",
                               "branch", "commit", "sku", "status", "samples");
  for (const auto& r : resp->runs()) {
    std::cout << absl::StrFormat("%-36s  %-19s  %-20s  %-12s  %-18s  %-9s %8d\n", r.run_id(),
                                 Time(r.finished_at()), r.branch(), r.commit().substr(0, 12), r.sku(),
                                 perfgate::v1::RunStatus_Name(r.status()), r.samples());
  }
  return 0;
}

int Run(const Config& c) {
  CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.GetRun(c.run_id);
  if (!resp.ok()) return RpcError(resp.status(), "run", c.coordinator);
  const auto& r = resp->run();
  std::cout << "run " << r.run_id() << "\n  branch " << r.branch() << " commit " << r.commit()
            << "\n  sku " << r.sku() << " node " << r.node() << "\n  status "
            << perfgate::v1::RunStatus_Name(r.status()) << ", " << r.samples() << " samples\n";
  for (const auto& [k, v] : resp->environment().fields()) std::cout << "  " << k << ": " << v << "\n";
  std::cout << absl::StrFormat("\n%-44s %-11s %12s %-8s %7s %5s %4s  %s\n", "benchmark", "metric", "median",
                               "unit", "noise", "n", "thr", "case");
  for (const auto& m : resp->summaries()) {
    std::cout << absl::StrFormat("%-44s %-11s %12.4g %-8s %6.2f%% %5d %4d  %s\n", m.benchmark(), m.metric(),
                                 m.median(), m.unit(), m.noise() * 100, m.n(), m.n_throttled(),
                                 perfgate::v1::CaseStatus_Name(m.status()));
  }
  return 0;
}

int History(const Config& c) {
  perfgate::v1::HistoryRequest req;
  req.set_benchmark(c.benchmark);
  req.set_metric(c.metric);
  req.set_sku(c.sku);
  req.set_branch(c.branch);
  req.set_limit(c.limit);
  CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.History(req);
  if (!resp.ok()) return RpcError(resp.status(), "history", c.coordinator);
  auto history = perfgate::wire::FromProto(*resp);
  if (!history.ok()) return BadAnswer(history.status(), "history");
  std::cout << perfgate::report::RenderHistory(*history, c.benchmark, c.metric);
  return WriteFile(c.json_file, perfgate::report::RenderHistoryJson(*history, c.benchmark, c.metric)) ? 0
                                                                                                     : kExitError;
}

int Fleet(const Config& c) {
  perfgate::v1::FleetRequest req;
  req.set_sku(c.sku);
  req.set_sweep(c.sweep);
  req.set_benchmark(c.benchmark);
  req.set_metric(c.metric);
  req.set_k(c.k);
  CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.Fleet(req);
  if (!resp.ok()) return RpcError(resp.status(), "fleet", c.coordinator);
  auto fleet = perfgate::wire::FromProto(*resp);
  if (!fleet.ok()) return BadAnswer(fleet.status(), "fleet");
  std::cout << perfgate::report::RenderFleet(*fleet, c.sku, c.sweep);
  if (!WriteFile(c.json_file, perfgate::report::RenderFleetJson(*fleet, c.sku, c.sweep))) return kExitError;
  return perfgate::report::FleetExitCode(*fleet);
}

int Calibrations(const Config& c) {
  auto policy_file = perfgate::gate::ReadPolicyFile(c.policy_file);
  if (!policy_file.ok()) {
    std::cerr << "perfgate: " << policy_file.status().message() << "\n";
    return kExitError;
  }
  const perfgate::gate::Policy& policy = policy_file->policy;
  perfgate::v1::ListCalibrationsRequest req;
  req.set_sku(c.sku);
  req.set_node(c.node);
  CoordinatorClient coordinator(CoordinatorOptions(c));
  auto resp = coordinator.ListCalibrations(req);
  if (!resp.ok()) return RpcError(resp.status(), "calibrations", c.coordinator);
  std::cout << perfgate::cli::RenderCalibrations(*resp, policy);
  return 0;
}

int Health(const Config& c) {
  // A coordinator still starting is waited for, up to --timeout.
  CoordinatorClient coordinator(CoordinatorOptions(c));
  auto status = coordinator.Health();
  if (!status.ok()) return RpcError(status.status(), "health", c.coordinator);
  std::cout << c.coordinator << ": " << grpc::health::v1::HealthCheckResponse::ServingStatus_Name(*status)
            << "\n";
  return *status == grpc::health::v1::HealthCheckResponse::SERVING ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"perfgate: gate merges on benchmark runs and ask the history"};
  app.set_config("--config", "", "TOML/INI file with option values (flags and PERFGATE_* override it)");
  app.require_subcommand(1);
  app.add_option("--coordinator", c.coordinator, "Coordinator address host:port")
      ->envname("PERFGATE_COORDINATOR")->capture_default_str();
  app.add_option("--timeout", c.timeout_s, "Seconds to wait for the coordinator")->capture_default_str();

  CLI::App* gate = app.add_subcommand(
      "gate", "Judge a candidate run against its baseline; exit 0 pass, 1 regression, 2 error, 3 inconclusive");
  gate->add_option("--run", c.run_id, "Candidate run id (perfgate-agent prints it)")->required();
  gate->add_option("--baseline-branch", c.baseline_branch, "Branch whose runs form the baseline")
      ->envname("PERFGATE_BASELINE_BRANCH")->capture_default_str();
  gate->add_option("--baseline-commit", c.baseline_commit,
                   "Merge-base commit: only it and its ancestors count as baseline");
  gate->add_option("--mode", c.mode, "history: the last K comparable runs of the baseline branch; "
                                     "ab: the baseline side measured in the same job (--baseline-run)")
      ->check(CLI::IsMember({"history", "ab"}))->capture_default_str();
  gate->add_option("--baseline-run", c.baseline_run_id,
                   "A/B mode: the baseline side's run id (perfgate-agent ab prints it)");
  gate->add_option("--policy", c.policy_file, "Gate policy (YAML)")->required()->envname("PERFGATE_POLICY");
  gate->add_option("--markdown", c.markdown_file, "Also write the report as Markdown here");
  gate->add_option("--junit", c.junit_file, "Also write the report as JUnit XML here");
  gate->add_option("--json", c.json_file, "Also write the report as JSON here");

  CLI::App* report = app.add_subcommand("report", "Show a stored gate report again; exits as the gate did");
  report->add_option("report_id", c.report_id, "Report id (perfgate gate prints it)")->required();
  report->add_option("--markdown", c.markdown_file, "Also write the report as Markdown here");
  report->add_option("--junit", c.junit_file, "Also write the report as JUnit XML here");
  report->add_option("--json", c.json_file, "Also write the report as JSON here");

  CLI::App* simulate = app.add_subcommand(
      "simulate", "Measure the gate's false-alarm, inconclusive and detection rates on synthetic runs "
                  "with a shared machine's noise (per-process offsets, drift, one-sided bursts)");
  simulate->add_option("--policy", c.policy_file, "Gate policy (YAML); the defaults when absent");
  simulate->add_option("--modes", c.sim_modes,
                       "How the sides reach the gate: single (one run a side), history (a run "
                       "against K runs), ab (adaptive perfgate-agent ab), ab-fixed (--rounds 30), "
                       "files (N result files a side)")
      ->delimiter(',')->capture_default_str();
  simulate->add_option("--metrics", c.sim.metrics, "Metrics per gate; metric 0 is the slowed one")
      ->check(CLI::Range(1u, 100000u))->capture_default_str();
  simulate->add_flag("--reciprocal", c.sim.reciprocal,
                     "Metrics come in pairs, time and throughput of one case, sharing samples "
                     "(as the built-in suites report them)");
  simulate->add_option("--noise", c.sim_noise_pct, "Within-run noise σ, in percent, one row each")
      ->delimiter(',')->capture_default_str();
  simulate->add_option("--tau", c.sim.tau_ratios, "Per-process offset τ as a multiple of σ, one row each")
      ->delimiter(',')->capture_default_str();
  simulate->add_option("--history", c.sim.history_runs, "History lengths K, one row each")
      ->delimiter(',')->capture_default_str();
  simulate->add_option("--files", c.sim.files, "Result files a side in files mode")
      ->check(CLI::Range(1u, 1000u))->capture_default_str();
  simulate->add_option("--drift", c.sim.drift_ratio, "Amplitude of the slow drift, in σ")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  simulate->add_option("--burst-samples", c.sim_burst_sample_pct,
                       "Percent of samples slowed 20-60 % on their own")
      ->check(CLI::Range(0.0, 100.0))->capture_default_str();
  simulate->add_option("--burst-processes", c.sim_burst_process_pct,
                       "Percent of processes slowed 20-60 % for a stretch")
      ->check(CLI::Range(0.0, 100.0))->capture_default_str();
  simulate->add_option("--aa-trials", c.sim.aa_trials, "A/A gates per row")->capture_default_str();
  simulate->add_option("--power-trials", c.sim.power_trials, "Gates per slowdown per row")
      ->capture_default_str();
  simulate->add_option("--seed", c.sim.seed, "Seed; the same seed gives the same table")
      ->capture_default_str();
  simulate->add_option("--threads", c.sim.threads, "Rows run in parallel (0: one per core); the table is the same")
      ->capture_default_str();
  simulate->add_option("--out", c.sim_out, "Also write the Markdown table here");

  CLI::App* runs = app.add_subcommand("runs", "List recent runs");
  runs->add_option("--branch", c.branch, "Only this branch");
  runs->add_option("--sku", c.sku, "Only this SKU");
  runs->add_option("--limit", c.limit, "At most this many (default 20)");

  CLI::App* run = app.add_subcommand("run", "Show one run with its per-case summaries");
  run->add_option("run_id", c.run_id, "Run id")->required();

  CLI::App* history = app.add_subcommand("history", "Print a metric's run medians over time and where their level shifted");
  history->add_option("--benchmark", c.benchmark, "Benchmark key, suite/name{k=v,...}")->required();
  history->add_option("--metric", c.metric, "Metric name")->required();
  history->add_option("--branch", c.branch, "Only this branch");
  history->add_option("--sku", c.sku, "Only this SKU");
  history->add_option("--limit", c.limit, "At most this many points (default 100)");
  history->add_option("--json", c.json_file, "Also write the series and its change points as JSON here");

  CLI::App* fleet = app.add_subcommand(
      "fleet", "Name the nodes of one SKU in one sweep whose medians lie beyond k MADs of the fleet's; "
               "exit 0 none worse, 1 some node worse, 2 error");
  fleet->add_option("--sku", c.sku, "SKU key of the nodes compared")->required();
  fleet->add_option("--sweep", c.sweep, "Sweep id: Slurm array job id, Slurm job id or CI job")->required();
  fleet->add_option("--benchmark", c.benchmark, "Only benchmark keys matching this glob");
  fleet->add_option("--metric", c.metric, "Only this metric");
  fleet->add_option("--k", c.k, "Threshold in MADs of the fleet median")
      ->check(CLI::PositiveNumber)->capture_default_str();
  fleet->add_option("--json", c.json_file, "Also write the outliers as JSON here");

  CLI::App* calibrations = app.add_subcommand(
      "calibrations", "List the nodes' stored noise floors per case, with age, staleness and whether "
                      "each case is fit to gate single runs at the policy's tolerance");
  calibrations->add_option("--sku", c.sku, "Only this SKU");
  calibrations->add_option("--node", c.node, "Only this node (hostname)");
  calibrations->add_option("--policy", c.policy_file,
                           "Gate policy (YAML) for tolerance and calibration_max_age; the defaults when absent")
      ->envname("PERFGATE_POLICY");

  CLI::App* health = app.add_subcommand(
      "health", "Ask the coordinator's grpc.health.v1 service; exit 0 when it is serving");

  // ingest: result files (perfgate, Google Benchmark, nvbench JSON) stored as runs.
  perfgate::cli::IngestOptions ingest_options;
  CLI::App* ingest = app.add_subcommand(
      "ingest", "Store result files (perfgate, Google Benchmark or nvbench JSON) as runs; prints each run id");
  ingest->fallthrough();  // --coordinator and --timeout may follow the subcommand
  ingest->add_option("files", ingest_options.files, "Result files, one run each")->required();
  ingest->add_option("--token-file", ingest_options.token_file, "File holding a bearer token for the coordinator")
      ->envname("PERFGATE_TOKEN_FILE");
  ingest->add_option("--branch", ingest_options.branch, "Branch the results belong to")->required()
      ->envname("PERFGATE_BRANCH");
  ingest->add_option("--commit", ingest_options.commit, "Commit the results belong to")->required()
      ->envname("PERFGATE_COMMIT");
  ingest->add_option("--sku", ingest_options.sku, "SKU key; required when the file names none (Google Benchmark)");
  ingest->add_option("--repo", ingest_options.repo, "Repository under test")->envname("PERFGATE_REPO");
  ingest->add_option("--node", ingest_options.node, "Node the results were measured on (default: from the file)");

  // compare: two result files offline, or two stored runs through the coordinator.
  perfgate::cli::CompareOptions compare_options;
  CLI::App* compare = app.add_subcommand(
      "compare", "A/B-judge candidate B against baseline A, both result files or both run ids; "
                 "exit 0 pass, 1 regression, 2 error, 3 inconclusive");
  compare->fallthrough();  // --coordinator and --timeout may follow the subcommand
  compare->add_option("baseline", compare_options.baseline, "Baseline: a result file or a run id");
  compare->add_option("candidate", compare_options.candidate, "Candidate: a result file or a run id");
  CLI::Option* base_files = compare->add_option(
      "--baseline", compare_options.baseline_files,
      "Baseline result files, one process each (e.g. five runs of the baseline binary)");
  CLI::Option* cand_files = compare->add_option(
      "--candidate", compare_options.candidate_files,
      "Candidate result files, one process each; with --baseline instead of A B");
  base_files->needs(cand_files);
  cand_files->needs(base_files);
  compare->add_option("--policy", compare_options.policy_file, "Gate policy (YAML); the defaults when absent")
      ->envname("PERFGATE_POLICY");
  compare->add_option("--sku", compare_options.sku, "SKU key the policy is resolved for (default: the candidate's)");
  compare->add_option("--calibration", compare_options.calibration_file,
                      "Calibration file of the node (perfgate-agent calibrate --output): lets one file a "
                      "side be judged when its SKU and environment are the candidate's");
  compare->add_option("--markdown", compare_options.markdown_file, "Also write the report as Markdown here");
  compare->add_option("--junit", compare_options.junit_file, "Also write the report as JUnit XML here");
  compare->add_option("--json", compare_options.json_file, "Also write the report as JSON here");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitError;
  }
  if (gate->parsed()) return Gate(c);
  if (report->parsed()) return Report(c);
  if (simulate->parsed()) return Simulate(c);
  if (runs->parsed()) return Runs(c);
  if (run->parsed()) return Run(c);
  if (health->parsed()) return Health(c);
  if (calibrations->parsed()) return Calibrations(c);
  if (fleet->parsed()) return Fleet(c);
  if (compare->parsed()) {
    const bool lists = !compare_options.baseline_files.empty();
    if (lists == !compare_options.baseline.empty() || (!lists && compare_options.candidate.empty())) {
      std::cerr << "perfgate: compare takes A B (two files or two run ids), or --baseline FILE... "
                   "--candidate FILE...\n";
      return kExitError;
    }
    compare_options.coordinator = c.coordinator;
    compare_options.timeout_s = c.timeout_s;
    return perfgate::cli::CompareCommand(compare_options, std::cout, std::cerr);
  }
  if (ingest->parsed()) {
    ingest_options.coordinator = c.coordinator;
    ingest_options.timeout_s = c.timeout_s;
    return perfgate::cli::IngestCommand(ingest_options);
  }
  return History(c);
}
