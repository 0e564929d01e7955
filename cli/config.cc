// The CLI11 app of `perfgate`, one function per subcommand, and the checks
// made before any server is asked.
#include "cli/config.h"

#include <CLI/CLI.hpp>
#include <pwd.h>
#include <unistd.h>

#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_support.h"
#include "client/tls_options.h"
#include "common/parse_errors.h"
#include "common/regression_state.h"
#include "common/row_limits.h"
#include "common/status_macros.h"
#include "common/time_text.h"

namespace perfgate::cli {
namespace {

void AddGlobalOptions(CLI::App& app, Config& c) {
  app.set_config("--config", "", "TOML/INI file with option values (flags and PERFGATE_* override it)");
  app.require_subcommand(1);
  app.add_option("--coordinator", c.coordinator, "Coordinator address host:port")
      ->envname("PERFGATE_COORDINATOR")->capture_default_str();
  app.add_option("--timeout", c.timeout_s, "Seconds to wait for the coordinator")->capture_default_str();
  app.add_option("--token-file", c.connection.token_file,
                 "File holding the credential's token (first line) sent to the coordinator")
      ->envname("PERFGATE_TOKEN_FILE");
  client::AddTlsOptions(&app, c.connection);
  // Every subcommand takes the options above after its name too.
  app.fallthrough();
}

// --markdown, --junit and --json: the report files of a gate.
void AddReportFiles(CLI::App* sub, std::string& markdown, std::string& junit, std::string& json) {
  sub->add_option("--markdown", markdown, "Also write the report as Markdown here");
  sub->add_option("--junit", junit, "Also write the report as JUnit XML here");
  sub->add_option("--json", json, "Also write the report here (GateReport in protobuf's JSON mapping)");
}

void AddPullRequestFiles(CLI::App* sub, report::PullRequestFiles& pr) {
  sub->add_option("--summary-file", pr.summary_file, "Append the report to this job summary (GitHub Actions sets it)")
      ->envname("GITHUB_STEP_SUMMARY");
  sub->add_option("--comment-file", pr.comment_file,
                  "Write a pull-request comment here: what regressed, what is unconfirmed, the link");
  sub->add_option("--checks-json", pr.checks_file, "Write a GitHub Checks API payload (POST .../check-runs) here");
  sub->add_option("--dashboard-url", pr.dashboard_url, "The dashboard's address, for the report's link")
      ->envname("PERFGATE_DASHBOARD_URL");
}

CLI::App* AddGate(CLI::App& app, Config& c) {
  CLI::App* gate = app.add_subcommand(
      "gate", "Judge a candidate run against its baseline; exit 0 pass, 1 regression, 2 error, 3 inconclusive");
  gate->add_option("--run", c.run_id,
                   "Candidate run id (perfgate-agent prints it); in history mode the other complete "
                   "runs of its branch and commit on comparable nodes are judged with it")
      ->required();
  gate->add_option("--baseline-branch", c.baseline_branch, "Branch whose runs form the baseline")
      ->envname("PERFGATE_BASELINE_BRANCH")->capture_default_str();
  gate->add_option("--baseline-commit", c.baseline_commit,
                   "Merge-base commit: only it and its ancestors count as baseline");
  // The value is checked by ValidateConfig, which names it.
  gate->add_option("--mode", c.mode_name, "history: the last K comparable runs of the baseline branch; "
                                     "ab: the baseline side measured in the same job (--baseline-run)")
      ->type_name("TEXT:{history,ab}")->capture_default_str();
  gate->add_option("--baseline-run", c.baseline_run_id,
                   "A/B mode: the baseline side's run id (perfgate-agent ab prints it)");
  gate->add_option("--policy", c.policy_file, "Gate policy (YAML)")->required()->envname("PERFGATE_POLICY");
  AddReportFiles(gate, c.markdown_file, c.junit_file, c.json_file);
  AddPullRequestFiles(gate, c.pr);
  return gate;
}

CLI::App* AddReport(CLI::App& app, Config& c) {
  CLI::App* report = app.add_subcommand("report", "Show a stored gate report again; exits as the gate did");
  report->add_option("report_id", c.report_id, "Report id (perfgate gate prints it)")->required();
  AddReportFiles(report, c.markdown_file, c.junit_file, c.json_file);
  AddPullRequestFiles(report, c.pr);
  return report;
}

CLI::App* AddSimulate(CLI::App& app, Config& c) {
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
  simulate->add_option("--slow-cpu", c.sim_slow_cpu_pct,
                       "A/B: percent by which one of two CPUs is slower (a host neighbour on one vCPU)")
      ->check(CLI::Range(0.0, 1000.0))->capture_default_str();
  simulate->add_flag("--no-pin{false}", c.sim.pin_cpus,
                     "A/B with --slow-cpu: blocks where the scheduler alternates them, not both blocks of a "
                     "round on one CPU (ab --pin-cpus off)");
  simulate->add_flag("--no-confirm{false}", c.sim.confirm,
                     "Decide on the first measurement: no second A/B measurement of a suspected "
                     "case, no second candidate run of an unconfirmed history case");
  simulate->add_option("--max-rounds", c.sim.max_rounds, "A/B: the most rounds a case gets, as ab's --max-rounds")
      ->check(CLI::Range(5u, 1000u))->capture_default_str();
  simulate->add_option("--aa-trials", c.sim.aa_trials, "A/A gates per row")->capture_default_str();
  simulate->add_option("--power-trials", c.sim.power_trials, "Gates per slowdown per row")
      ->capture_default_str();
  simulate->add_option("--seed", c.sim.seed, "Seed; the same seed gives the same table")
      ->capture_default_str();
  simulate->add_option("--threads", c.sim.threads, "Rows run in parallel (0: one per core); the table is the same")
      ->capture_default_str();
  simulate->add_option("--out", c.sim_out, "Also write the Markdown table here");
  simulate->add_flag("--tail", c.sim_tail,
                     "Tail latencies instead: heavy-tailed serving runs, each process's p50 and p99 one value, "
                     "A/B rounds paired; rates for changes of p99 alone (--aa-trials, --power-trials and --seed apply)");
  simulate->add_option("--tail-requests", c.sim_tail_options.requests, "Tail: requests a process, one row each")
      ->delimiter(',')->check(CLI::Range(1u, 1000000u))->capture_default_str();
  simulate->add_option("--tail-rounds", c.sim_tail_options.rounds, "Tail: A/B rounds, one row each")
      ->delimiter(',')->check(CLI::Range(3u, 1000u))->capture_default_str();
  return simulate;
}

// --limit of a listing: its default and most are the coordinator's (common/row_limits.h).
void AddLimit(CLI::App& sub, unsigned& limit, const RowLimit& rows, const std::string& which = "") {
  sub.add_option("--limit", limit,
                 absl::StrCat("At most this many ", rows.rows, which, " (default ", rows.fallback, ", at most ",
                              rows.most, ")"))
      ->check(CLI::Range(1u, rows.most));
}

CLI::App* AddRuns(CLI::App& app, Config& c) {
  CLI::App* runs = app.add_subcommand("runs", "List recent runs");
  runs->add_option("--branch", c.branch, "Only this branch");
  runs->add_option("--sku", c.sku, "Only this SKU");
  AddLimit(*runs, c.limit, kRunRows);
  return runs;
}

CLI::App* AddRun(CLI::App& app, Config& c) {
  CLI::App* run = app.add_subcommand("run", "Show one run with its per-case summaries");
  run->add_option("run_id", c.run_id, "Run id")->required();
  return run;
}

CLI::App* AddHistory(CLI::App& app, Config& c) {
  CLI::App* history = app.add_subcommand("history", "Print a metric's run medians over time and where their level shifted");
  history->add_option("--benchmark", c.benchmark, "Benchmark key, suite/name{k=v,...}")->required();
  history->add_option("--metric", c.metric, "Metric name")->required();
  history->add_option("--branch", c.branch, "Only this branch");
  history->add_option("--sku", c.sku, "Only this SKU");
  AddLimit(*history, c.limit, kSeriesPointRows, ", the newest");
  history->add_option("--from", c.from_text,
                      "Only runs finished at or after this time: seconds since the epoch or RFC 3339 "
                      "(2026-11-28T02:00:00Z)");
  history->add_option("--to", c.to_text, "Only runs finished before this time (as --from)");
  history->add_option("--json", c.json_file,
                      "Also write the answer here (HistoryResponse in protobuf's JSON mapping)");
  return history;
}

CLI::App* AddFleet(CLI::App& app, Config& c) {
  CLI::App* fleet = app.add_subcommand(
      "fleet", "Name the nodes of one SKU in one sweep whose medians lie beyond k MADs of the fleet's; "
               "exit 0 none worse, 1 some node worse, 2 error");
  fleet->add_option("--sku", c.sku, "SKU key of the nodes compared")->required();
  fleet->add_option("--sweep", c.sweep, "Sweep id: Slurm array job id, Slurm job id or CI job")->required();
  fleet->add_option("--benchmark", c.benchmark, "Only benchmark keys matching this glob");
  fleet->add_option("--metric", c.metric, "Only this metric");
  fleet->add_option("--k", c.k, "Threshold in MADs of the fleet median")
      ->check(CLI::PositiveNumber)->capture_default_str();
  fleet->add_option("--json", c.json_file, "Also write the answer here (FleetResponse in protobuf's JSON mapping)");
  return fleet;
}

CLI::App* AddCalibrations(CLI::App& app, Config& c) {
  CLI::App* calibrations = app.add_subcommand(
      "calibrations", "List the nodes' stored noise floors per case, with age, staleness and whether "
                      "each case is fit to gate single runs at the policy's tolerance");
  calibrations->add_option("--sku", c.sku, "Only this SKU");
  calibrations->add_option("--node", c.node, "Only this node (hostname)");
  calibrations->add_option("--policy", c.policy_file,
                           "Gate policy (YAML) for tolerance and calibration_max_age; the defaults when absent")
      ->envname("PERFGATE_POLICY");
  return calibrations;
}

CLI::App* AddHealth(CLI::App& app, Config&) {
  return app.add_subcommand("health", "Ask the coordinator's grpc.health.v1 service; exit 0 when it is serving");
}

// The format of result files, named instead of detected (formats/format_registry.h).
void AddResultFormat(CLI::App* sub, const std::string& flag, std::string& format) {
  sub->add_option(flag, format,
                  absl::StrCat("Read the result files as this format instead of detecting it: ",
                               absl::StrJoin(ResultFormatNames(), ", ")));
}

// ingest: result files of any format formats/ reads (docs/result-files.md) stored as runs.
CLI::App* AddIngest(CLI::App& app, Config& c) {
  IngestOptions& o = c.ingest;
  CLI::App* ingest = app.add_subcommand(
      "ingest", "Store result files (perfgate, Google Benchmark, nvbench, pytest-benchmark, hyperfine, nccl-tests "
                "or Bencher BMF) as runs; prints each run id");
  ingest->fallthrough();  // --coordinator and --timeout may follow the subcommand
  ingest->add_option("files", o.files, "Result files, one run each")->required();
  ingest->add_option("--branch", o.branch, "Branch the results belong to")->required()
      ->envname("PERFGATE_BRANCH");
  ingest->add_option("--commit", o.commit, "Commit the results belong to")->required()
      ->envname("PERFGATE_COMMIT");
  ingest->add_option("--sku", o.sku, "SKU key; required when the file names none");
  ingest->add_option("--repo", o.repo, "Repository under test")->envname("PERFGATE_REPO");
  ingest->add_option("--node", o.node, "Node the results were measured on (default: from the file)");
  AddResultFormat(ingest, "--format", o.format);
  return ingest;
}

// compare: two result files offline, or two stored runs through the coordinator.
CLI::App* AddCompare(CLI::App& app, Config& c) {
  CompareOptions& o = c.compare;
  CLI::App* compare = app.add_subcommand(
      "compare", "A/B-judge candidate B against baseline A, both result files or both run ids; "
                 "exit 0 pass, 1 regression, 2 error, 3 inconclusive");
  compare->fallthrough();  // --coordinator and --timeout may follow the subcommand
  compare->add_option("baseline", o.baseline, "Baseline: a result file or a run id");
  compare->add_option("candidate", o.candidate, "Candidate: a result file or a run id");
  CLI::Option* base_files = compare->add_option(
      "--baseline", o.baseline_files,
      "Baseline result files, one process each (e.g. five runs of the baseline binary)");
  CLI::Option* cand_files = compare->add_option(
      "--candidate", o.candidate_files,
      "Candidate result files, one process each; with --baseline instead of A B");
  base_files->needs(cand_files);
  cand_files->needs(base_files);
  compare->add_option("--policy", o.policy_file, "Gate policy (YAML); the defaults when absent")
      ->envname("PERFGATE_POLICY");
  compare->add_option("--sku", o.sku, "SKU key the policy is resolved for (default: the candidate's)");
  compare->add_option("--calibration", o.calibration_file,
                      "Calibration file of the node (perfgate-agent calibrate --output): lets one file a "
                      "side be judged when its SKU and environment are the candidate's");
  AddResultFormat(compare, "--format", o.format);
  AddReportFiles(compare, o.markdown_file, o.junit_file, o.json_file);
  AddPullRequestFiles(compare, o.pr);
  return compare;
}

absl::Status ReadPolicy(Config& c) {
  auto policy = gate::ReadPolicyFile(c.policy_file);
  if (!policy.ok()) return absl::InvalidArgumentError(policy.status().message());
  c.policy = *std::move(policy);
  return absl::OkStatus();
}

absl::Status ValidateGate(Config& c) {
  if (c.mode_name != ToString(gate::Mode::kHistory) && c.mode_name != ToString(gate::Mode::kAb)) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown --mode '", c.mode_name, "' (expected history or ab)"));
  }
  c.mode = c.mode_name == ToString(gate::Mode::kAb) ? gate::Mode::kAb : gate::Mode::kHistory;
  PERFGATE_RETURN_IF_ERROR(ReadPolicy(c));
  if (c.mode == gate::Mode::kAb && c.baseline_run_id.empty()) {
    return absl::InvalidArgumentError("--mode ab needs --baseline-run, the run of the baseline side");
  }
  return absl::OkStatus();
}

// The policy, the modes by name, and the percentages as fractions.
absl::Status ValidateSimulate(Config& c) {
  PERFGATE_RETURN_IF_ERROR(ReadPolicy(c));
  c.sim.modes.clear();
  for (const std::string& name : c.sim_modes) {
    gate::SimMode m;
    if (!gate::ParseSimMode(name, &m)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown mode '", name, "' (expected single, history, ab, ab-fixed or files)"));
    }
    c.sim.modes.push_back(m);
  }
  c.sim.noise_levels.clear();
  for (double pct : c.sim_noise_pct) c.sim.noise_levels.push_back(pct / 100);
  c.sim.burst_sample = c.sim_burst_sample_pct / 100;
  c.sim.burst_process = c.sim_burst_process_pct / 100;
  c.sim.slow_cpu = c.sim_slow_cpu_pct / 100;
  return absl::OkStatus();
}

// A B, or the two lists; the coordinator and timeout for run ids.
absl::Status ValidateCompare(Config& c) {
  CompareOptions& o = c.compare;
  const bool lists = !o.baseline_files.empty();
  if (lists == !o.baseline.empty() || (!lists && o.candidate.empty())) {
    return absl::InvalidArgumentError(
        "compare takes A B (two files or two run ids), or --baseline FILE... --candidate FILE...");
  }
  o.coordinator = c.coordinator;
  o.timeout_s = c.timeout_s;
  return CheckResultFormat(o.format);
}

// The token and TLS files, read once, before any call.
absl::Status ReadConnection(Config& c) {
  c.connection.address = c.coordinator;
  c.connection.timeout_s = c.timeout_s;
  auto client = client::MakeClientOptions(c.connection);
  PERFGATE_RETURN_IF_ERROR(client);
  c.client = *std::move(client);
  c.compare.client = c.client;
  c.ingest.client = c.client;
  return absl::OkStatus();
}

// export: result files of any readable format, written in another tool's format.
CLI::App* AddExport(CLI::App& app, Config& c) {
  CLI::App* sub = app.add_subcommand("export", "Write result files of any readable format as Bencher Metric Format JSON");
  sub->add_option("files", c.export_files, "Result files; their cases are pooled")->required();
  sub->add_option("--format", c.export_format, "Output format: bmf (Bencher Metric Format)")
      ->check(CLI::IsMember({"bmf"}))->capture_default_str();
  sub->add_option("--output", c.export_output, "Write here (atomically) instead of stdout");
  AddResultFormat(sub, "--input-format", c.export_input_format);  // --format is the output's
  return sub;
}

// A regression state's name (common/regression_state.h), checked before
// anything is asked of the coordinator.
CLI::Validator RegressionStateName() {
  return CLI::Validator(
      [](std::string& name) -> std::string {
        if (ParseRegressionState(name)) return "";
        return "'" + name + "' is not one of new, acknowledged, investigating, fixed, accepted, invalid";
      },
      "STATE");
}

CLI::App* AddRegressions(CLI::App& app, Config& c) {
  CLI::App* sub = app.add_subcommand("regressions", "List regressions found on tracked branches");
  sub->add_option("--http", c.http, "The coordinator's HTTP address (its --http-listen); HTTPS with --tls or --tls-ca")
      ->envname("PERFGATE_HTTP")->capture_default_str();
  sub->add_option("--state", c.state, "Only this state: new, acknowledged, investigating, fixed, accepted, invalid")
      ->check(RegressionStateName());
  sub->add_option("--branch", c.branch, "Only this branch");
  sub->add_option("--sku", c.sku, "Only this SKU");
  AddLimit(*sub, c.limit, kRegressionRows);
  return sub;
}

CLI::App* AddTriage(CLI::App& app, Config& c) {
  CLI::App* sub = app.add_subcommand("triage", "Change a regression's state, with a note");
  sub->add_option("id", c.regression_id, "Regression id (perfgate regressions prints it)")->required();
  sub->add_option("--state", c.state, "acknowledged, investigating, fixed, accepted or invalid")
      ->required()->check(RegressionStateName());
  sub->add_option("--note", c.note, "Why")->required();
  sub->add_option("--commit", c.commit, "The fixing commit (with --state fixed)");
  sub->add_option("--by", c.by, "Who (default: $USER, else the login name)")->envname("USER");
  sub->add_option("--http", c.http, "The coordinator's HTTP address (its --http-listen); HTTPS with --tls or --tls-ca")
      ->envname("PERFGATE_HTTP")->capture_default_str();
  return sub;
}

// bisect: the range or regression, how commits are built and measured.
CLI::App* AddBisect(CLI::App& app, Config& c) {
  CLI::App* sub = app.add_subcommand("bisect", "Find the commit that carries a regression (docs/bisect.md)");
  BisectSettings& b = c.bisect;
  sub->add_option("regression", c.regression_id, "A stored regression's id (perfgate regressions prints it)");
  sub->add_option("--good", c.good, "The last commit at the old level");
  sub->add_option("--bad", c.bad, "The first commit known to carry the change");
  sub->add_option("--good-image", c.good_image, "Instead of commits, a stack upgrade: the old image, NAME@sha256:<hex>");
  sub->add_option("--bad-image", c.bad_image, "The new image, NAME@sha256:<hex> (with --good-image)");
  sub->add_flag("--into-merges", b.into_merges, "When the culprit is a merge commit, search the commits it brought in");
  sub->add_option("--status", c.bisect_status, "Show a stored bisection's steps and outcome");
  sub->add_option("--resume", c.bisect_resume, "Go on with a stored bisection from its stored probes");
  sub->add_option("--repo", b.repo, "The git checkout")->capture_default_str();
  sub->add_option("--build", b.build, "Build command run in a worktree of the commit: {commit}, {artifact} (the folder to fill)");
  sub->add_option("--artifact", b.artifact, "Ready build of each commit instead: a path with {commit} ({image} with images)");
  sub->add_option("--cmd", b.command, "The benchmark program of a build, as ab runs it: {artifact} ({image} with images), {out}, {samples}");
  sub->add_option("--case", c.bisect_case, "The case judged (default: the regression's, else the worst at bad)");
  sub->add_option("--metric", c.bisect_metric, "The metric judged (with --case)");
  sub->add_option("--min-change", c.bisect_min_change_pct, "Smallest change at bad worth bisecting, in %")
      ->capture_default_str();
  sub->add_option("--attempts", c.bisect_attempts, "Measurements of one commit before it is inconclusive")
      ->capture_default_str();
  sub->add_option("--probes-per-round", c.bisect_per_round, "Commits measured in one round")->capture_default_str();
  sub->add_option("--agent", b.agent, "The perfgate-agent whose ab measures, also on --resume "
                                      "(default: the one beside perfgate, else the one in PATH)");
  sub->add_flag("--count", b.count, "Judge each probe by instructions counted under callgrind, one process a side "
                                    "(a Google Benchmark program), instead of timed rounds");
  sub->add_option("--ab-arg", b.ab_args, "A flag for ab, repeated (--ab-arg=--block-time=0.3)");
  sub->add_option("--case-budget", b.case_budget_s, "ab's seconds a probe at its first attempt")->capture_default_str();
  sub->add_option("--max-rounds", b.max_rounds, "ab's rounds a probe at its first attempt")->capture_default_str();
  sub->add_option("--work-dir", b.work_dir, "Builds, worktrees and probe reports (default: perfgate-bisect/ in "
                                            "the checkout's git folder; with images, $XDG_CACHE_HOME/perfgate-bisect)");
  sub->add_option("--by", c.by, "Who (default: $USER, else the login name)")->envname("USER");
  sub->add_flag("--slurm", b.slurm, "Each round as an sbatch array (work dir shared with the nodes)");
  sub->add_option("--sbatch-arg", b.sbatch_args, "A flag for sbatch, repeated (--sbatch-arg=--constraint=h100)");
  sub->add_option("--http", c.http, "The coordinator's HTTP address (its --http-listen); HTTPS with --tls or --tls-ca")
      ->envname("PERFGATE_HTTP")->capture_default_str();
  return sub;
}

// One of a regression, --good/--bad, --status, --resume; a new one's settings.
absl::Status ValidateBisect(Config& c) {
  const bool range = !c.good.empty() || !c.bad.empty();
  const bool images = !c.good_image.empty() || !c.bad_image.empty();
  const int given = (c.regression_id != 0) + range + images + (c.bisect_status != 0) + (c.bisect_resume != 0);
  if (given != 1) {
    return absl::InvalidArgumentError("bisect takes one of REGRESSION_ID, --good C1 --bad C2, --good-image I1 "
                                      "--bad-image I2, --status ID and --resume ID");
  }
  if (range && (c.good.empty() || c.bad.empty())) return absl::InvalidArgumentError("--good and --bad go together");
  if (images) {
    PERFGATE_RETURN_IF_ERROR(CheckImageDigest("--good-image", c.good_image));
    PERFGATE_RETURN_IF_ERROR(CheckImageDigest("--bad-image", c.bad_image));
    if (c.good_image == c.bad_image) return absl::InvalidArgumentError("--good-image and --bad-image are the same");
    if (c.bisect.into_merges) return absl::InvalidArgumentError("--into-merges applies to commits, not images");
    if (c.bisect.count) {
      return absl::InvalidArgumentError("--count runs each build's program under callgrind on this node; it cannot "
                                        "count a program inside an image");
    }
    c.bisect.images = true;
  }
  if (c.bisect_case.empty() != c.bisect_metric.empty()) {
    return absl::InvalidArgumentError("--case and --metric go together");
  }
  if (c.bisect.count && !c.bisect_metric.empty() && c.bisect_metric != "instructions") {
    return absl::InvalidArgumentError(absl::StrCat("--count judges instructions, not '", c.bisect_metric,
                                                   "': name --metric instructions, or leave --case and --metric out"));
  }
  if (!(c.bisect_min_change_pct > 0) || c.bisect_attempts == 0 || c.bisect_per_round == 0) {
    return absl::InvalidArgumentError("--min-change must be positive, --attempts and --probes-per-round at least 1");
  }
  if (c.bisect_status != 0 || c.bisect_resume != 0) return absl::OkStatus();
  return CheckSettings(c.bisect);
}

// Who runs this when $USER is not set (a container, cron): the account's
// name, else its number, so that a stored change always says who made it.
std::string LoginName() {
  const uid_t uid = getuid();
  if (const passwd* pw = getpwuid(uid); pw != nullptr && pw->pw_name != nullptr && pw->pw_name[0] != '\0') {
    return pw->pw_name;
  }
  return absl::StrCat("uid ", uid);
}

// history: --from and --to as moments, to after from.
absl::Status ValidateHistory(Config& c) {
  for (auto [flag, text, out] : {std::tuple{"--from", &c.from_text, &c.history_from},
                                 std::tuple{"--to", &c.to_text, &c.history_to}}) {
    if (text->empty()) continue;
    auto t = ParseTimeText(flag, *text);
    PERFGATE_RETURN_IF_ERROR(t);
    *out = *t;
  }
  if (c.history_from && c.history_to && *c.history_to <= *c.history_from) {
    return absl::InvalidArgumentError("--to must be later than --from");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateConfig(Config& c) {
  if ((c.command == Command::kBisect || c.command == Command::kTriage) && c.by.empty()) c.by = LoginName();
  if (c.command != Command::kSimulate && c.command != Command::kExport) {
    PERFGATE_RETURN_IF_ERROR(ReadConnection(c));
  }
  switch (c.command) {
    case Command::kGate:
      return ValidateGate(c);
    case Command::kSimulate:
      return ValidateSimulate(c);
    case Command::kCalibrations:
      return ReadPolicy(c);
    case Command::kCompare:
      return ValidateCompare(c);
    case Command::kBisect:
      return ValidateBisect(c);
    case Command::kHistory:
      return ValidateHistory(c);
    case Command::kIngest:
      c.ingest.coordinator = c.coordinator;
      c.ingest.timeout_s = c.timeout_s;
      return CheckResultFormat(c.ingest.format);
    case Command::kExport:
      return CheckResultFormat(c.export_input_format);
    default:
      return absl::OkStatus();
  }
}

std::optional<int> ParseCommandLine(int argc, const char* const* argv, Config& c, std::ostream& out,
                                    std::ostream& err) {
  CLI::App app{"perfgate: gate merges on benchmark runs and ask the history"};
  AddGlobalOptions(app, c);
  const std::vector<std::pair<CLI::App*, Command>> subcommands = {
      {AddGate(app, c), Command::kGate},
      {AddReport(app, c), Command::kReport},
      {AddSimulate(app, c), Command::kSimulate},
      {AddRuns(app, c), Command::kRuns},
      {AddRun(app, c), Command::kRun},
      {AddHistory(app, c), Command::kHistory},
      {AddFleet(app, c), Command::kFleet},
      {AddCalibrations(app, c), Command::kCalibrations},
      {AddHealth(app, c), Command::kHealth},
      {AddIngest(app, c), Command::kIngest},
      {AddCompare(app, c), Command::kCompare},
      {AddRegressions(app, c), Command::kRegressions},
      {AddTriage(app, c), Command::kTriage},
      {AddExport(app, c), Command::kExport},
      {AddBisect(app, c), Command::kBisect},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ReportParseError(app, e, "perfgate", out, err);
  }
  for (const auto& [sub, command] : subcommands) {
    if (sub->parsed()) c.command = command;
  }
  if (absl::Status s = ValidateConfig(c); !s.ok()) {
    err << "perfgate: " << s.message() << "\n";
    return kExitError;
  }
  return std::nullopt;
}

}  // namespace perfgate::cli
