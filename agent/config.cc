#include "agent/config.h"

#include <CLI/CLI.hpp>
#include <cmath>

#include <cstdlib>
#include <iostream>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "agent/ab.h"
#include "agent/agent.h"
#include "agent/calibrate.h"
#include "agent/command_support.h"
#include "agent/image.h"
#include "client/tls_options.h"
#include "common/parse_errors.h"

namespace perfgate::agent {
namespace {

void AddSelection(CLI::App* cmd, AgentConfig& c) {
  cmd->add_option("--suite", c.suites, "Suites to run (default: all built in)")
      ->envname("PERFGATE_SUITES")->delimiter(',');
  cmd->add_option("--filter", c.filters, "Globs over benchmark keys, e.g. 'kernels/sgemm*'")
      ->delimiter(';');
  cmd->add_option("--set", c.sets, "Override a parameter's values: NAME=V1,V2");
}

// --coordinator, --token-file, --rpc-timeout and the TLS options.
void AddCoordinator(CLI::App* cmd, AgentConfig& c, const std::string& what) {
  cmd->add_option("--coordinator", c.coordinator, what)
      ->envname("PERFGATE_COORDINATOR")->capture_default_str();
  cmd->add_option("--token-file", c.token_file, "File holding this agent's bearer token")
      ->envname("PERFGATE_TOKEN_FILE");
  cmd->add_option("--rpc-timeout", c.rpc_timeout_s, "Seconds to wait for the coordinator on each call")
      ->capture_default_str()->check(CLI::PositiveNumber);
  client::AddTlsOptions(cmd, c.connection);
}

void AddSpool(CLI::App* cmd, AgentConfig& c) {
  cmd->add_option("--spool", c.spool_dir, "Directory keeping each batch until the coordinator acknowledged it")
      ->envname("PERFGATE_SPOOL")->capture_default_str();
  cmd->add_option("--reconnect-for", c.reconnect_s,
                  "Seconds the agent keeps retrying an unreachable coordinator once the run has ended, before "
                  "leaving the run in the spool for `replay` (during the run it retries with back-off throughout)")
      ->envname("PERFGATE_RECONNECT_FOR")->capture_default_str()->check(CLI::NonNegativeNumber);
}

// What a run is of: --agent-name, --repo, --branch, --commit, --trigger, --ci-job.
void AddRunIdentity(CLI::App* cmd, AgentConfig& c, const char* branch_help, const char* commit_help) {
  cmd->add_option("--agent-name", c.agent_name, "Agent name (default: hostname)")->envname("PERFGATE_AGENT_NAME");
  cmd->add_option("--repo", c.repo, "Repository under test")->envname("PERFGATE_REPO");
  cmd->add_option("--branch", c.branch, branch_help)->envname("PERFGATE_BRANCH");
  cmd->add_option("--commit", c.commit, commit_help)->envname("PERFGATE_COMMIT");
  cmd->add_option("--trigger", c.trigger, "ci, sweep or manual")
      ->envname("PERFGATE_TRIGGER")->check(CLI::IsMember({"ci", "sweep", "manual"}))->capture_default_str();
  cmd->add_option("--ci-job", c.ci_job, "CI job id")->envname("PERFGATE_CI_JOB");
}

void AddTimeout(CLI::App* cmd, AgentConfig& c, const char* help) {
  cmd->add_option("--timeout", c.engine.timeout_s, help)
      ->envname("PERFGATE_CASE_TIMEOUT")->capture_default_str()->check(CLI::PositiveNumber);
}

// The ranks of a multi-rank run.
void AddWorld(CLI::App* run, AgentConfig& c) {
  run->add_option("--rank", c.rank,
                  "This process's rank in a multi-rank run (default: SLURM_PROCID when SLURM_NTASKS > 1, else 0)")
      ->envname("PERFGATE_RANK")->check(CLI::NonNegativeNumber);
  run->add_option("--world-size", c.world_size, "Ranks in the run, one process each (default: SLURM_NTASKS, else 1)")
      ->envname("PERFGATE_WORLD_SIZE")->check(CLI::PositiveNumber);
  run->add_option("--rendezvous", c.rendezvous,
                  "Where the ranks meet: file:DIR (a fresh directory every rank sees) or tcp:HOST:PORT (rank 0 listens)")
      ->envname("PERFGATE_RENDEZVOUS");
  run->add_option("--transport-host", c.transport_host,
                  "Address this rank's host transport binds to (default: the hostname's address)")
      ->envname("PERFGATE_TRANSPORT_HOST");
  run->add_option("--device", c.device, "CUDA device of this rank (default: SLURM_LOCALID, else the rank)")
      ->envname("PERFGATE_DEVICE")->check(CLI::NonNegativeNumber);
  run->add_option("--gpus", c.gpus,
                  "With --world-size 1 on the nccl backend: devices one process drives (default: all visible)")
      ->envname("PERFGATE_GPUS")->check(CLI::NonNegativeNumber);
}

CLI::App* AddRun(CLI::App& app, AgentConfig& c) {
  CLI::App* run = app.add_subcommand("run", "Measure the selected cases and stream them to the coordinator");
  AddSelection(run, c);
  AddCoordinator(run, c, "Coordinator address host:port");
  AddSpool(run, c);
  AddRunIdentity(run, c, "Branch under test (default: git, else 'local')", "Commit under test (default: git HEAD)");
  run->add_option("--run-id-file", c.run_id_file, "Write the run id to this file");
  run->add_option("--inject-slowdown", c.slowdown_specs,
                  "CASE=PCT: add real work worth PCT % of the case's time (proves the gate)");
  run->add_option("--inject-work", c.work_specs,
                  "CASE=PCT: the case does PCT % more of its own work (host copy and triad), so its time and its "
                  "counts grow by that fraction (proves the counted gate)");
  run->add_option("--count", c.run_count,
                  "Also count each measured case under callgrind, one process: 'instructions', or 'cache' "
                  "for simulated cache and branch misses as well; or 'gpu': a CUDA case's kernels under "
                  "Nsight Compute (--ncu); or 'hw': the CPU's hardware counters where the machine exposes them; "
                  "stored beside its time")
      ->check(CLI::IsMember({"instructions", "cache", "gpu", "hw"}));
  run->add_option("--ncu", c.ncu, "With --count gpu: Nsight Compute's command line")
      ->envname("PERFGATE_NCU")->capture_default_str();
  run->add_option("--min-samples", c.engine.min_samples, "Samples before the case may stop")
      ->capture_default_str()->check(CLI::Range(2u, 1000000u));
  run->add_option("--min-time", c.engine.min_time_s, "Seconds of samples before the case may stop")
      ->capture_default_str()->check(CLI::NonNegativeNumber);
  run->add_option("--max-noise", c.max_noise_pct, "Noise target in percent (stdev/mean)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  run->add_option("--time-budget", c.time_budget,
                  "Bound on the whole run (90, 60s, 2m): each case gets at most the budget left "
                  "over the cases left; cases not started in time are skipped")
      ->envname("PERFGATE_TIME_BUDGET");
  AddTimeout(run, c, "Per-case time limit in seconds");
  // Result file and runs without a coordinator.
  run->add_option("--output", c.output_file,
                  "Also write the run to this perfgate result file (JSON; written whole, by rename)")
      ->envname("PERFGATE_OUTPUT");
  run->add_flag("--offline", c.offline, "Measure without a coordinator (needs --output); same as --coordinator none");
  AddWorld(run, c);
  return run;
}

CLI::App* AddReplay(CLI::App& app, AgentConfig& c) {
  CLI::App* replay =
      app.add_subcommand("replay", "Send the runs left in the spool (measured while the coordinator was away)");
  AddCoordinator(replay, c, "Coordinator address host:port");
  AddSpool(replay, c);
  return replay;
}

CLI::App* AddList(CLI::App& app, AgentConfig& c) {
  CLI::App* list = app.add_subcommand("list", "Print the cases and metrics the suites offer here");
  AddSelection(list, c);
  return list;
}

// `ab`'s rounds and blocks; --min-samples sets --block-samples to half of it
// unless that is given.
void AddAbMeasurement(CLI::App* ab, AgentConfig& c) {
  ab->add_option("--rounds", c.ab_rounds,
                 "Measure exactly this many block pairs per case (default: adaptive, rounds are added "
                 "until the gate can decide or the case budget is spent)")
      ->check(CLI::Range(1u, 1000u));
  ab->add_option("--max-rounds", c.ab_max_rounds, "Most block pairs per case when adaptive")
      ->capture_default_str()->check(CLI::Range(5u, 1000u));
  ab->add_option_function<std::string>(
        "--case-budget",
        [&c](const std::string& v) {
          c.ab_case_budget_auto = v == "auto";
          if (!c.ab_case_budget_auto) c.ab_case_budget_s = std::stod(v);
        },
        "Seconds one case may take, confirmation included; 'auto': what the first round's pace says "
        "--max-rounds rounds need (at least the default, at most --time-budget's share)")
      ->envname("PERFGATE_AB_CASE_BUDGET")->default_str("60")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v == "auto") return "";
            double x = 0;
            if (!absl::SimpleAtod(v, &x) || !(x > 0) || !std::isfinite(x)) {
              return "--case-budget takes a positive number of seconds or 'auto', not '" + v + "'";
            }
            return "";
          },
          "SECONDS|auto"));
  ab->add_option("--time-budget", c.time_budget,
                 "Bound on the whole job (90, 60s, 2m): each case gets at most the budget left over "
                 "the cases left")
      ->envname("PERFGATE_TIME_BUDGET");
  ab->add_option("--block-time", c.ab_block_seconds, "Seconds of samples per block; blocks are sized from a pilot block")
      ->capture_default_str()->check(CLI::PositiveNumber);
  CLI::Option* block_samples =
      ab->add_option("--block-samples", c.ab_block_samples, "Exactly this many samples per block instead of --block-time")
          ->check(CLI::Range(1u, 100000u));
  CLI::Option* min_samples =
      ab->add_option("--min-samples", c.engine.min_samples, "Sets --block-samples to half of it")
          ->check(CLI::Range(2u, 1000000u));
  ab->callback([&c, block_samples, min_samples] {
    if (block_samples->count() == 0 && min_samples->count() > 0) c.ab_block_samples = (c.engine.min_samples + 1) / 2;
  });
  ab->add_option("--min-time", c.engine.min_time_s, "Accepted as for run; blocks have a fixed sample count")
      ->check(CLI::NonNegativeNumber);
  ab->add_option("--max-noise", c.max_noise_pct, "Accepted as for run; blocks have a fixed sample count")
      ->check(CLI::PositiveNumber);
  AddTimeout(ab, c, "Per-block time limit in seconds");
  ab->add_flag("--confirm,!--no-confirm", c.ab_confirm,
               "Measure a suspected regression again before failing it (default on)");
  ab->add_option_function<std::string>(
        "--pin-cpus",
        [&c](const std::string& v) {
          int n = 0;
          c.ab_pin_cpus = v == "auto" ? -1 : v == "off" ? 0 : (absl::SimpleAtoi(v, &n) ? n : -1);
        },
        "Both blocks of a round run on the same CPUs, the next set each round, so that a slower CPU "
        "falls on both sides alike: auto (perfgate's own host cases, as many CPUs as a process keeps busy), "
        "off, or a count for every case, a program's included")
      ->default_str("auto")
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            int n = 0;
            if (v == "auto" || v == "off" || (absl::SimpleAtoi(v, &n) && n > 0 && n <= 4096)) return "";
            return "--pin-cpus takes auto, off or a count of CPUs (1 or more), not '" + v + "'";
          },
          "auto|off|N"));
}

CLI::App* AddAb(CLI::App& app, AgentConfig& c) {
  CLI::App* ab = app.add_subcommand(
      "ab", "Measure a baseline and a candidate build interleaved on this node and gate the "
            "candidate; exit 0 pass, 1 regression, 2 error, 3 inconclusive");
  AddSelection(ab, c);
  auto* baseline = ab->add_option("--baseline", c.ab_baseline,
                                  "Command prefix running the baseline's perfgate-agent, e.g. '/builds/main/perfgate-agent'");
  auto* candidate = ab->add_option("--candidate", c.ab_candidate,
                                   "Command prefix running the candidate's perfgate-agent; flags for that side only "
                                   "(--inject-slowdown) go at its end");
  ab->add_option("--baseline-image", c.ab_baseline_image,
                 "Instead of --baseline: an image pinned by digest, REPO@sha256:..., whose entrypoint is perfgate-agent")
      ->excludes(baseline);
  ab->add_option("--candidate-image", c.ab_candidate_image,
                 "Instead of --candidate: an image pinned by digest, run the same way")
      ->excludes(candidate);
  ab->add_option("--baseline-cmd", c.ab_baseline_cmd,
                 "Instead of --baseline: any benchmark program's command, run as one process a block; {out} is "
                 "the result file it writes (else its stdout), {samples} the repetitions a case should make, e.g. "
                 "'./bench_main --benchmark_repetitions={samples} --benchmark_out={out}'")
      ->excludes(baseline);
  ab->add_option("--candidate-cmd", c.ab_candidate_cmd,
                 "Instead of --candidate: the candidate program's command, with the same placeholders")
      ->excludes(candidate);
  ab->add_option("--block-timeout", c.ab_block_timeout_s,
                 "Seconds a program side's block may run before it is killed (with --baseline-cmd)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  ab->add_option("--count", c.ab_count,
                 "Also count each case under callgrind, one process a side (a Google Benchmark program's, or "
                 "perfgate's own host cases): 'instructions', or 'cache' for simulated cache and branch misses as well; "
                 "or 'gpu': perfgate's own CUDA cases' kernels under Nsight Compute (--ncu); or 'hw': perfgate's own "
                 "cases by the CPU's hardware counters where the machine exposes them")
      ->check(CLI::IsMember({"instructions", "cache", "gpu", "hw"}));
  ab->add_option("--ncu", c.ncu, "With --count gpu: Nsight Compute's command line")
      ->envname("PERFGATE_NCU")->capture_default_str();
  ab->add_option("--count-toggle", c.ab_count_toggle,
                 "With --count and --baseline-cmd: callgrind's --toggle-collect pattern, the benchmark functions")
      ->capture_default_str();
  ab->add_option("--count-processes", c.ab_count_processes, "With --count: counted processes per case and side")
      ->capture_default_str()->check(CLI::Range(1u, 20u));
  ab->add_flag("--count-only", c.ab_count_only, "With --count: the counts alone, no timed rounds");
  ab->add_option("--container-engine", c.container_engine, "Runs the image sides: podman or docker")
      ->envname("PERFGATE_CONTAINER_ENGINE")->capture_default_str();
  ab->add_option("--container-arg", c.container_args,
                 "A flag for the engine's `run` before the image, e.g. '--device=nvidia.com/gpu=all' (repeatable)")
      ->allow_extra_args(false);
  AddAbMeasurement(ab, c);
  ab->add_option("--policy", c.policy_file, "Gate policy (YAML); default: 3 % tolerance, every metric gating")
      ->envname("PERFGATE_POLICY");
  ab->add_option("--markdown", c.markdown_file, "Also write the report as Markdown here");
  ab->add_option("--junit", c.junit_file, "Also write the report as JUnit XML here");
  ab->add_option("--json", c.json_file,
                 "Also write the report here (GateReport in protobuf's JSON mapping, with each case's rounds)");
  AddCoordinator(ab, c, "Coordinator address host:port (both sides are sent as runs)");
  ab->add_flag("--offline", c.offline, "Decide locally and send nothing (same as --coordinator none)");
  AddRunIdentity(ab, c, "Branch of the candidate (default: git, else 'local')",
                 "Commit of the candidate (default: git HEAD)");
  return ab;
}

CLI::App* AddCalibrate(CLI::App& app, AgentConfig& c) {
  CLI::App* calibrate = app.add_subcommand(
      "calibrate", "Measure this node's run-to-run spread of each case with repeated A/A processes "
                   "and store it for the gate; exit 0 all calibrated, 1 a case failed, 2 error");
  AddSelection(calibrate, c);
  calibrate->add_option("--processes", c.calibrate_processes,
                        "Separate processes per case; the spread between their medians is the noise floor")
      ->capture_default_str()->check(CLI::Range(3u, 1000u));
  calibrate->add_option("--block-time", c.calibrate_block_seconds,
                        "Seconds of samples per process; sized from a pilot process")
      ->capture_default_str()->check(CLI::PositiveNumber);
  AddTimeout(calibrate, c, "Per-process time limit in seconds");
  calibrate->add_option("--policy", c.policy_file,
                        "Gate policy (YAML) whose tolerance the fitness column uses; default 3 %")
      ->envname("PERFGATE_POLICY");
  calibrate->add_option("--output", c.output_file,
                        "Also write the calibration to this file (JSON; written whole, by rename)");
  calibrate->add_flag("--offline", c.offline, "Store nothing on a coordinator (same as --coordinator none)");
  AddCoordinator(calibrate, c, "Coordinator address host:port");
  calibrate->add_option("--agent-name", c.agent_name, "Agent name (default: hostname)")
      ->envname("PERFGATE_AGENT_NAME");
  return calibrate;
}

CLI::App* AddSample(CLI::App& app, AgentConfig& c) {
  // Before the subcommand, so that an `ab` side's command prefix can carry it.
  app.add_option("--inject-slowdown", c.slowdown_specs,
                 "CASE=PCT, for `sample`: add real work worth PCT % of the case's time")
      ->envname("PERFGATE_INJECT_SLOWDOWN");
  app.add_option("--inject-work", c.work_specs,
                 "CASE=PCT, for `sample`: the case does PCT % more of its own work (host copy and triad)")
      ->envname("PERFGATE_INJECT_WORK");
  CLI::App* sample = app.add_subcommand(
      "sample", "Internal, run by `ab` on each side: one case, exactly --samples samples, its "
                "result file on stdout");
  AddSelection(sample, c);
  sample->add_option("--case", c.sample_case, "The case's exact key (as `list` prints it)")->required();
  sample->add_option("--samples", c.sample_count, "Samples after warm-up")
      ->required()->check(CLI::Range(1u, 1000000u));
  AddTimeout(sample, c, "Time limit in seconds");
  sample->add_flag("--counted", c.sample_counted,
                   "Run under callgrind by `ab --count`: the machine is not probed (valgrind would read the symbols "
                   "of every library the probe opens)");
  sample->add_flag("--counted-gpu", c.sample_counted_gpu,
                   "Run under Nsight Compute by `--count gpu`: open the CUDA profiler's range around each sample, "
                   "so that `ncu --profile-from-start off` profiles the samples' kernels alone");
  sample->add_flag("--counted-hw", c.sample_counted_hw,
                   "Run by `--count hw`: count the samples with the CPU's hardware counters and print those counts "
                   "per iteration as the case's metrics");
  return sample;
}

// A value that does not hold, with the "what" of its message.
struct Invalid {
  const char* what;
  absl::Status status;
};

bool Selects(Command c) { return c != Command::kReplay && c != Command::kProbe; }
bool Connects(Command c) {
  return c == Command::kRun || c == Command::kReplay || c == Command::kAb || c == Command::kCalibrate;
}

// The flags of one side of `ab`, and the "what" of their errors.
struct SideFlags {
  const char* command;
  const char* image;
  const char* bad_command;
  const char* bad_image;
};

// One side of `ab`: a command prefix, or an image pinned by digest.
std::optional<Invalid> ParseSide(const AgentConfig& c, const std::string& command, const std::string& image,
                                 const SideFlags& flags, std::vector<std::string>& argv) {
  if (!image.empty()) {
    auto side = ImageSideCommand(c.container_engine, c.container_args, image);
    if (!side.ok()) return Invalid{flags.bad_image, side.status()};
    argv = *std::move(side);
    return std::nullopt;
  }
  if (command.empty()) {
    return Invalid{"bad option",
                   absl::InvalidArgumentError(
                       absl::StrCat(flags.command, ", ", flags.image, " or ", flags.command, "-cmd is required"))};
  }
  auto split = SplitCommand(command);
  if (!split.ok()) return Invalid{flags.bad_command, split.status()};
  argv = *std::move(split);
  return std::nullopt;
}

// Both sides benchmark programs: their commands split, the selection
// flags refused (a program selects its own cases).
std::optional<Invalid> ParsePrograms(AgentConfig& c) {
  const bool mixed = !c.ab_baseline.empty() || !c.ab_candidate.empty() || !c.ab_baseline_image.empty() ||
                     !c.ab_candidate_image.empty() || c.ab_baseline_cmd.empty() || c.ab_candidate_cmd.empty();
  if (mixed) {
    return Invalid{"bad option", absl::InvalidArgumentError(
                                     "--baseline-cmd and --candidate-cmd go together, and with neither --baseline, "
                                     "--candidate nor an image: both sides are programs, or both perfgate-agent builds")};
  }
  if (!c.suites.empty() || !c.filters.empty() || !c.sets.empty()) {
    return Invalid{"bad option", absl::InvalidArgumentError(
                                     "--suite, --filter and --set select perfgate's own cases; a program selects its "
                                     "cases with its own flags (e.g. --benchmark_filter=REGEX) in --baseline-cmd and "
                                     "--candidate-cmd")};
  }
  for (auto [command, argv, flag] : {std::tuple(&c.ab_baseline_cmd, &c.ab_baseline_argv, "bad --baseline-cmd"),
                                     std::tuple(&c.ab_candidate_cmd, &c.ab_candidate_argv, "bad --candidate-cmd")}) {
    auto split = SplitCommand(*command);
    if (!split.ok()) return Invalid{flag, split.status()};
    *argv = *std::move(split);
  }
  c.ab_programs = true;
  return std::nullopt;
}

std::optional<Invalid> ParseSides(AgentConfig& c) {
  if (c.ab_count_only && c.ab_count.empty()) {
    return Invalid{"bad --count-only", absl::InvalidArgumentError("--count-only needs --count (instructions or cache)")};
  }
  if ((c.ab_count == "gpu" || c.ab_count == "hw") && (!c.ab_baseline_cmd.empty() || !c.ab_candidate_cmd.empty())) {
    return Invalid{"bad --count", absl::InvalidArgumentError(absl::StrCat(
                                      "--count ", c.ab_count,
                                      " counts perfgate's own cases (--baseline/--candidate); a program side is "
                                      "counted in its benchmark functions under callgrind: --count instructions or "
                                      "cache"))};
  }
  if (!c.ab_baseline_cmd.empty() || !c.ab_candidate_cmd.empty()) return ParsePrograms(c);
  static constexpr SideFlags kBaseline{"--baseline", "--baseline-image", "bad --baseline", "bad --baseline-image"};
  static constexpr SideFlags kCandidate{"--candidate", "--candidate-image", "bad --candidate",
                                        "bad --candidate-image"};
  if (auto bad = ParseSide(c, c.ab_baseline, c.ab_baseline_image, kBaseline, c.ab_baseline_argv)) return bad;
  return ParseSide(c, c.ab_candidate, c.ab_candidate_image, kCandidate, c.ab_candidate_argv);
}

// The flags' values parsed; the first that does not hold.
std::optional<Invalid> ParseValues(Command command, AgentConfig& c) {
  if (Selects(command)) {
    auto sets = ParseSets(c.sets);
    if (!sets.ok()) return Invalid{"bad selection", sets.status()};
    c.set_values = *std::move(sets);
  }
  if (auto digest = RecordedImageDigest(std::getenv("PERFGATE_IMAGE_DIGEST"), false); !digest.ok()) {
    return Invalid{"bad environment", digest.status()};
  }
  for (auto [flag, specs, parsed] : {std::tuple{"--inject-slowdown", &c.slowdown_specs, &c.slowdowns},
                                     std::tuple{"--inject-work", &c.work_specs, &c.added_work}}) {
    for (const std::string& spec : *specs) {
      auto s = ParseInjection(flag, spec);
      if (!s.ok()) return Invalid{"bad option", s.status()};
      parsed->push_back(*s);
    }
  }
  if (!c.time_budget.empty() && (command == Command::kRun || command == Command::kAb)) {
    auto budget = ParseDuration(c.time_budget);
    if (!budget.ok()) return Invalid{"bad --time-budget", budget.status()};
    c.time_budget_s = *budget;
  }
  if (command == Command::kRun || command == Command::kSample) {
    auto world = ResolveWorld(c);
    if (!world.ok()) return Invalid{"bad option", world.status()};
    c.world = *world;
    if (!c.run_count.empty() && c.world.size > 1) {
      return Invalid{"bad --count", absl::InvalidArgumentError("--count counts one process under callgrind; a run "
                                                              "of several ranks cannot be counted")};
    }
  }
  if (command == Command::kAb) return ParseSides(c);
  return std::nullopt;
}

// What the command needs besides the flags: the files they name, and the
// combinations that cannot work.
std::optional<Invalid> CheckNeeds(Command command, AgentConfig& c) {
  if (command == Command::kRun && c.offline && c.output_file.empty()) {
    return Invalid{"bad option", absl::InvalidArgumentError("--offline (or --coordinator none) needs --output FILE: "
                                                            "nothing else would keep the results")};
  }
  if (command == Command::kCalibrate && c.calibrate_processes < kMinCalibrateProcesses) {
    return Invalid{"bad option", absl::InvalidArgumentError(absl::StrCat(
                                     "--processes ", c.calibrate_processes, ": at least ", kMinCalibrateProcesses))};
  }
  if (command == Command::kAb || command == Command::kCalibrate) {
    auto policy = gate::ReadPolicyFile(c.policy_file);
    if (!policy.ok()) return Invalid{"bad --policy", policy.status()};
    c.policy = std::move(policy->policy);
  }
  if (Connects(command)) {
    // The token and TLS files are read once, here, so that a bad one costs no minutes.
    c.connection.address = c.coordinator;
    c.connection.token_file = c.token_file;
    c.connection.timeout_s = c.rpc_timeout_s;
    auto client = c.offline ? client::MakeClientOptions(c.coordinator, "", c.rpc_timeout_s)
                            : client::MakeClientOptions(c.connection);
    if (!client.ok()) return Invalid{"bad option", client.status()};
    c.client = *std::move(client);
  }
  return std::nullopt;
}

}  // namespace

CommandLine ParseCommandLine(int argc, char** argv) {
  CommandLine line;
  AgentConfig& c = line.config;
  CLI::App app{"perfgate-agent: run benchmark suites and stream samples to a perfgate coordinator"};
  app.set_config("--config", "", "TOML/INI file with option values (flags and PERFGATE_* override it)");
  app.require_subcommand(1);
  const std::vector<std::pair<CLI::App*, Command>> commands = {
      {AddRun(app, c), Command::kRun},
      {AddReplay(app, c), Command::kReplay},
      {AddList(app, c), Command::kList},
      {app.add_subcommand("probe", "Print the SKU and environment this machine reports"), Command::kProbe},
      {AddAb(app, c), Command::kAb},
      {AddCalibrate(app, c), Command::kCalibrate},
      {AddSample(app, c), Command::kSample},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    line.exit_code = ReportParseError(app, e, "perfgate-agent", std::cout, std::cerr);
    return line;
  }
  for (const auto& [cmd, command] : commands) {
    if (cmd->parsed()) line.command = command;
  }
  c.offline = c.offline || c.coordinator == "none";
  std::optional<Invalid> invalid = ParseValues(line.command, c);
  if (!invalid) invalid = CheckNeeds(line.command, c);
  if (invalid) line.exit_code = Fail(invalid->status, invalid->what);
  return line;
}

}  // namespace perfgate::agent
