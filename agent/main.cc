// perfgate-agent: probe the machine, run suites through the measurement
// engine, stream every sample to the coordinator.
#include <CLI/CLI.hpp>

#include "agent/agent.h"

int main(int argc, char** argv) {
  perfgate::agent::AgentConfig config;
  CLI::App app{"perfgate-agent: run benchmark suites and stream samples to a perfgate coordinator"};
  app.set_config("--config", "", "TOML/INI file with option values (flags and PERFGATE_* override it)");
  app.require_subcommand(1);

  auto add_selection = [&](CLI::App* cmd) {
    cmd->add_option("--suite", config.suites, "Suites to run (default: all built in)")
        ->envname("PERFGATE_SUITES")->delimiter(',');
    cmd->add_option("--filter", config.filters, "Globs over benchmark keys, e.g. 'kernels/sgemm*'")
        ->delimiter(';');
    cmd->add_option("--set", config.sets, "Override a parameter's values: NAME=V1,V2");
  };

  CLI::App* run = app.add_subcommand("run", "Measure the selected cases and stream them to the coordinator");
  add_selection(run);
  auto add_connection = [&](CLI::App* cmd) {
    cmd->add_option("--coordinator", config.coordinator, "Coordinator address host:port")
        ->envname("PERFGATE_COORDINATOR")->capture_default_str();
    cmd->add_option("--token-file", config.token_file, "File holding this agent's bearer token")
        ->envname("PERFGATE_TOKEN_FILE");
    cmd->add_option("--spool", config.spool_dir,
                    "Directory keeping each batch until the coordinator acknowledged it")
        ->envname("PERFGATE_SPOOL")->capture_default_str();
    cmd->add_option("--rpc-timeout", config.rpc_timeout_s,
                    "Seconds to wait for the coordinator on each call")
        ->capture_default_str()->check(CLI::PositiveNumber);
  };
  add_connection(run);
  run->add_option("--agent-name", config.agent_name, "Agent name (default: hostname)")
      ->envname("PERFGATE_AGENT_NAME");
  run->add_option("--repo", config.repo, "Repository under test")->envname("PERFGATE_REPO");
  run->add_option("--branch", config.branch, "Branch under test (default: git, else 'local')")
      ->envname("PERFGATE_BRANCH");
  run->add_option("--commit", config.commit, "Commit under test (default: git HEAD)")
      ->envname("PERFGATE_COMMIT");
  run->add_option("--trigger", config.trigger, "ci, sweep or manual")
      ->envname("PERFGATE_TRIGGER")->check(CLI::IsMember({"ci", "sweep", "manual"}))->capture_default_str();
  run->add_option("--ci-job", config.ci_job, "CI job id")->envname("PERFGATE_CI_JOB");
  run->add_option("--run-id-file", config.run_id_file, "Write the run id to this file");
  run->add_option("--inject-slowdown", config.slowdowns,
                  "CASE=PCT: add real work worth PCT % of the case's time (proves the gate)");
  run->add_option("--min-samples", config.engine.min_samples, "Samples before the case may stop")->capture_default_str()->check(CLI::Range(2u, 1000000u));
  run->add_option("--min-time", config.engine.min_time_s, "Seconds of samples before the case may stop")->capture_default_str()->check(CLI::NonNegativeNumber);
  run->add_option("--max-noise", config.max_noise_pct, "Noise target in percent (stdev/mean)")->capture_default_str()->check(CLI::PositiveNumber);
  run->add_option("--time-budget", config.time_budget,
                  "Bound on the whole run (90, 60s, 2m): each case gets at most the budget left "
                  "over the cases left; cases not started in time are skipped")
      ->envname("PERFGATE_TIME_BUDGET");
  run->add_option("--timeout", config.engine.timeout_s, "Per-case time limit in seconds")->envname("PERFGATE_CASE_TIMEOUT")->capture_default_str()->check(CLI::PositiveNumber);
  // Result file and runs without a coordinator.
  run->add_option("--output", config.output_file,
                  "Also write the run to this perfgate result file (JSON; written whole, by rename)")
      ->envname("PERFGATE_OUTPUT");
  run->add_flag("--offline", config.offline,
                "Measure without a coordinator (needs --output); same as --coordinator none");

  run->add_option("--rank", config.rank,
                  "This process's rank in a multi-rank run (default: SLURM_PROCID when SLURM_NTASKS > 1, else 0)")
      ->envname("PERFGATE_RANK")->check(CLI::NonNegativeNumber);
  run->add_option("--world-size", config.world_size,
                  "Ranks in the run, one process each (default: SLURM_NTASKS, else 1)")
      ->envname("PERFGATE_WORLD_SIZE")->check(CLI::PositiveNumber);
  run->add_option("--rendezvous", config.rendezvous,
                  "Where the ranks meet: file:DIR (a fresh directory every rank sees) or tcp:HOST:PORT (rank 0 listens)")
      ->envname("PERFGATE_RENDEZVOUS");
  run->add_option("--transport-host", config.transport_host,
                  "Address this rank's host transport binds to (default: the hostname's address)")
      ->envname("PERFGATE_TRANSPORT_HOST");
  run->add_option("--device", config.device, "CUDA device of this rank (default: SLURM_LOCALID, else the rank)")
      ->envname("PERFGATE_DEVICE")->check(CLI::NonNegativeNumber);
  run->add_option("--gpus", config.gpus,
                  "With --world-size 1 on the nccl backend: devices one process drives (default: all visible)")
      ->envname("PERFGATE_GPUS")->check(CLI::NonNegativeNumber);

  CLI::App* replay = app.add_subcommand(
      "replay", "Send the runs left in the spool (measured while the coordinator was away)");
  add_connection(replay);

  CLI::App* list = app.add_subcommand("list", "Print the cases and metrics the suites offer here");
  add_selection(list);
  app.add_subcommand("probe", "Print the SKU and environment this machine reports");

  CLI::App* ab = app.add_subcommand(
      "ab", "Measure a baseline and a candidate build interleaved on this node and gate the "
            "candidate; exit 0 pass, 1 regression, 2 error, 3 inconclusive");
  add_selection(ab);
  ab->add_option("--baseline", config.ab_baseline,
                 "Command prefix running the baseline's perfgate-agent, e.g. '/builds/main/perfgate-agent'")
      ->required();
  ab->add_option("--candidate", config.ab_candidate,
                 "Command prefix running the candidate's perfgate-agent; flags for that side only "
                 "(--inject-slowdown) go at its end")
      ->required();
  ab->add_option("--rounds", config.ab_rounds,
                 "Measure exactly this many block pairs per case (default: adaptive, rounds are added "
                 "until the gate can decide or the case budget is spent)")
      ->check(CLI::Range(1u, 1000u));
  ab->add_option("--max-rounds", config.ab_max_rounds, "Most block pairs per case when adaptive")
      ->capture_default_str()->check(CLI::Range(5u, 1000u));
  ab->add_option("--case-budget", config.ab_case_budget_s,
                 "Seconds one case may take, confirmation included")
      ->envname("PERFGATE_AB_CASE_BUDGET")->capture_default_str()->check(CLI::PositiveNumber);
  ab->add_option("--time-budget", config.time_budget,
                 "Bound on the whole job (90, 60s, 2m): each case gets at most the budget left over "
                 "the cases left")
      ->envname("PERFGATE_TIME_BUDGET");
  ab->add_option("--block-time", config.ab_block_seconds,
                 "Seconds of samples per block; blocks are sized from a pilot block")
      ->capture_default_str()->check(CLI::PositiveNumber);
  CLI::Option* block_samples =
      ab->add_option("--block-samples", config.ab_block_samples,
                     "Exactly this many samples per block instead of --block-time")
          ->check(CLI::Range(2u, 100000u));
  CLI::Option* ab_min_samples =
      ab->add_option("--min-samples", config.engine.min_samples, "Sets --block-samples to half of it")
          ->check(CLI::Range(2u, 1000000u));
  ab->add_option("--min-time", config.engine.min_time_s, "Accepted as for run; blocks have a fixed sample count")
      ->check(CLI::NonNegativeNumber);
  ab->add_option("--max-noise", config.max_noise_pct, "Accepted as for run; blocks have a fixed sample count")
      ->check(CLI::PositiveNumber);
  ab->add_option("--timeout", config.engine.timeout_s, "Per-block time limit in seconds")
      ->envname("PERFGATE_CASE_TIMEOUT")->capture_default_str()->check(CLI::PositiveNumber);
  ab->add_option("--policy", config.policy_file, "Gate policy (YAML); default: 3 % tolerance, every metric gating")
      ->envname("PERFGATE_POLICY");
  ab->add_flag("--confirm,!--no-confirm", config.ab_confirm,
               "Measure a suspected regression again before failing it (default on)");
  ab->add_option("--markdown", config.markdown_file, "Also write the report as Markdown here");
  ab->add_option("--junit", config.junit_file, "Also write the report as JUnit XML here");
  ab->add_option("--json", config.json_file, "Also write the report as JSON here");
  ab->add_option("--coordinator", config.coordinator, "Coordinator address host:port (both sides are sent as runs)")
      ->envname("PERFGATE_COORDINATOR")->capture_default_str();
  ab->add_option("--token-file", config.token_file, "File holding this agent's bearer token")
      ->envname("PERFGATE_TOKEN_FILE");
  ab->add_option("--rpc-timeout", config.rpc_timeout_s, "Seconds to wait for the coordinator on each call")
      ->capture_default_str()->check(CLI::PositiveNumber);
  ab->add_flag("--offline", config.offline, "Decide locally and send nothing (same as --coordinator none)");
  ab->add_option("--agent-name", config.agent_name, "Agent name (default: hostname)")->envname("PERFGATE_AGENT_NAME");
  ab->add_option("--repo", config.repo, "Repository under test")->envname("PERFGATE_REPO");
  ab->add_option("--branch", config.branch, "Branch of the candidate (default: git, else 'local')")
      ->envname("PERFGATE_BRANCH");
  ab->add_option("--commit", config.commit, "Commit of the candidate (default: git HEAD)")
      ->envname("PERFGATE_COMMIT");
  ab->add_option("--trigger", config.trigger, "ci, sweep or manual")
      ->envname("PERFGATE_TRIGGER")->check(CLI::IsMember({"ci", "sweep", "manual"}))->capture_default_str();
  ab->add_option("--ci-job", config.ci_job, "CI job id")->envname("PERFGATE_CI_JOB");

  CLI::App* calibrate = app.add_subcommand(
      "calibrate", "Measure this node's run-to-run spread of each case with repeated A/A processes "
                   "and store it for the gate; exit 0 all calibrated, 1 a case failed, 2 error");
  add_selection(calibrate);
  calibrate->add_option("--processes", config.calibrate_processes,
                        "Separate processes per case; the spread between their medians is the "
                        "noise floor")
      ->capture_default_str()->check(CLI::Range(3u, 1000u));
  calibrate->add_option("--block-time", config.calibrate_block_seconds,
                        "Seconds of samples per process; sized from a pilot process")
      ->capture_default_str()->check(CLI::PositiveNumber);
  calibrate->add_option("--timeout", config.engine.timeout_s, "Per-process time limit in seconds")
      ->envname("PERFGATE_CASE_TIMEOUT")->capture_default_str()->check(CLI::PositiveNumber);
  calibrate->add_option("--policy", config.policy_file,
                        "Gate policy (YAML) whose tolerance the fitness column uses; default 3 %")
      ->envname("PERFGATE_POLICY");
  calibrate->add_option("--output", config.output_file,
                        "Also write the calibration to this file (JSON; written whole, by rename)");
  calibrate->add_flag("--offline", config.offline,
                      "Store nothing on a coordinator (same as --coordinator none)");
  calibrate->add_option("--coordinator", config.coordinator, "Coordinator address host:port")
      ->envname("PERFGATE_COORDINATOR")->capture_default_str();
  calibrate->add_option("--token-file", config.token_file, "File holding this agent's bearer token")
      ->envname("PERFGATE_TOKEN_FILE");
  calibrate->add_option("--rpc-timeout", config.rpc_timeout_s,
                        "Seconds to wait for the coordinator on each call")
      ->capture_default_str()->check(CLI::PositiveNumber);
  calibrate->add_option("--agent-name", config.agent_name, "Agent name (default: hostname)")
      ->envname("PERFGATE_AGENT_NAME");

  // Before the subcommand, so that an `ab` side's command prefix can carry it.
  app.add_option("--inject-slowdown", config.slowdowns,
                 "CASE=PCT, for `sample`: add real work worth PCT % of the case's time");
  CLI::App* sample = app.add_subcommand(
      "sample", "Internal, run by `ab` on each side: one case, exactly --samples samples, its "
                "result file on stdout");
  add_selection(sample);
  sample->add_option("--case", config.sample_case, "The case's exact key (as `list` prints it)")->required();
  sample->add_option("--samples", config.sample_count, "Samples after warm-up")
      ->required()->check(CLI::Range(1u, 1000000u));
  sample->add_option("--timeout", config.engine.timeout_s, "Time limit in seconds")
      ->envname("PERFGATE_CASE_TIMEOUT")->capture_default_str()->check(CLI::PositiveNumber);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : perfgate::agent::kExitError;
  }
  if (run->parsed()) return perfgate::agent::RunCommand(config);
  if (replay->parsed()) return perfgate::agent::ReplayCommand(config);
  if (list->parsed()) return perfgate::agent::ListCommand(config);
  if (ab->parsed()) {
    if (block_samples->count() == 0 && ab_min_samples->count() > 0) {
      config.ab_block_samples = (config.engine.min_samples + 1) / 2;
    }
    return perfgate::agent::AbCommand(config);
  }
  if (sample->parsed()) return perfgate::agent::SampleCommand(config);
  if (calibrate->parsed()) return perfgate::agent::CalibrateCommand(config);
  return perfgate::agent::ProbeCommand();
}
