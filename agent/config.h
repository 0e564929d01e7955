// The agent's configuration: the CLI11 app of `perfgate-agent` (one function
// per subcommand) and the validation of everything it read, before any
// command runs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/runner.h"
#include "client/coordinator_client.h"
#include "measure/engine.h"
#include "gate/policy.h"
#include "suites/collectives/world.h"

namespace perfgate::agent {

/// Everything the agent's commands read; filled from defaults, a config file,
/// PERFGATE_* variables and flags, in that order, then validated as a whole
/// (ParseCommandLine): the fields under "parsed at start" hold what the flags
/// mean, so that no command parses a flag halfway through its work.
struct AgentConfig {
  std::vector<std::string> suites;
  std::vector<std::string> filters;
  std::vector<std::string> sets;  // NAME=V1,V2, as given (passed on to `sample` workers)
  std::string coordinator = "127.0.0.1:50051";
  std::string token_file;
  client::ConnectionFlags connection;  // --tls, --tls-ca, --tls-cert, --tls-key, --tls-server-name
  std::string spool_dir = "/var/tmp/perfgate/spool";
  double rpc_timeout_s = 30;
  double reconnect_s = 300;  // --reconnect-for: retrying after the run, before leaving it in the spool
  std::string agent_name;
  std::string repo;
  std::string branch;
  std::string commit;
  std::string trigger = "manual";
  std::string ci_job;
  std::string run_id_file;
  std::string output_file;  // result file of `run`, calibration file of `calibrate`; empty: none
  bool offline = false;     // measure without a coordinator (also set by coordinator "none")
  std::vector<std::string> slowdown_specs;  // --inject-slowdown CASE=PCT, as given
  std::vector<std::string> work_specs;      // --inject-work CASE=PCT, as given
  EngineOptions engine;
  double max_noise_pct = 0.5;
  // Multi-rank suites (collectives): this process's rank of world_size.
  // Unset (-1, 0): from SLURM_PROCID / SLURM_NTASKS when SLURM_NTASKS > 1,
  // else rank 0 of 1. Only rank 0 talks to the coordinator.
  int rank = -1;
  int world_size = 0;
  std::string rendezvous;      // file:DIR or tcp:HOST:PORT, needed when world_size > 1
  std::string transport_host;  // address the ranks' host transport binds to (default: hostname)
  int device = -1;             // CUDA device of this rank (default: SLURM_LOCALID, else rank)
  int gpus = 0;                // world size 1 on NCCL: devices to drive (0: all visible)
  std::string time_budget;  // bounds the whole run: "60s", "2m", "90"; empty: none (as given)
  // `sample`, the worker `ab` runs on each side: one case by its exact key.
  std::string sample_case;
  unsigned sample_count = 10;  // exactly this many samples after warm-up
  bool sample_counted = false;  // `sample --counted`: under callgrind, the machine not probed
  bool sample_counted_gpu = false;  // `sample --counted-gpu`: under ncu, the profiler's range around each sample
  bool sample_counted_hw = false;   // `sample --counted-hw`: the samples' hardware counts are the case's metrics
  std::string ncu = "ncu";          // Nsight Compute's command line, for --count gpu
  // `run --count`: each case that ended ok also counted under callgrind
  // ("instructions", or "cache" with simulated misses), stored beside its time.
  std::string run_count;
  // `ab`: the two builds as command prefixes, split with shell quoting rules.
  std::string ab_baseline;
  std::string ab_candidate;
  // `ab` with image sides: references pinned by digest, run by the engine.
  std::string ab_baseline_image, ab_candidate_image;
  // `ab` with program sides: any benchmark command that writes a result
  // file ({out}, else stdout), taking {samples} repetitions where it can.
  std::string ab_baseline_cmd, ab_candidate_cmd;
  double ab_block_timeout_s = 600;  // a program side's block is killed after this
  // `ab --count`: each program's cases counted under callgrind as well
  // ("instructions", or "cache" with simulated misses), or alone.
  std::string ab_count;
  std::string ab_count_toggle = "BM_*";
  unsigned ab_count_processes = 1;
  bool ab_count_only = false;
  std::string container_engine = "podman";
  std::vector<std::string> container_args;  // engine flags before the image (GPUs, registry TLS)
  unsigned ab_rounds = 0;         // > 0: exactly this many rounds; 0: adaptive
  unsigned ab_block_samples = 0;  // > 0: samples per block; 0: sized by ab_block_seconds
  double ab_block_seconds = 0.5;
  unsigned ab_max_rounds = 45;
  double ab_case_budget_s = 60;   // one case, confirmation included
  bool ab_case_budget_auto = false;  // --case-budget auto: sized from the first round's pace
  bool ab_confirm = true;
  int ab_pin_cpus = -1;  // --pin-cpus: -1 auto, 0 off, N CPUs per round
  // `calibrate`: A/A processes per case and the seconds of samples each takes.
  unsigned calibrate_processes = 10;
  double calibrate_block_seconds = 0.5;
  std::string policy_file;  // gate policy (YAML); empty: the default policy
  std::string markdown_file, junit_file, json_file;  // report copies; empty: none

  // Parsed at start.
  std::map<std::string, std::vector<std::string>> set_values;  // --set, ranges expanded
  std::vector<Injection> slowdowns;                             // --inject-slowdown
  std::vector<Injection> added_work;                            // --inject-work
  std::optional<double> time_budget_s;                          // --time-budget
  suites::collectives::WorldOptions world;  // `run`, `sample`: this process's place among the ranks
  client::ClientOptions client;             // address, --rpc-timeout, the token and TLS files (read unless offline)
  gate::Policy policy;                      // --policy, else the default policy
  std::vector<std::string> ab_baseline_argv, ab_candidate_argv;  // `ab`: the sides, split
  bool ab_programs = false;  // `ab`: the sides are benchmark programs (--baseline-cmd), not perfgate-agent builds
};


/// The subcommands of perfgate-agent.
enum class Command { kRun, kReplay, kList, kProbe, kAb, kSample, kCalibrate };

/// A command line, parsed and validated.
struct CommandLine {
  Command command = Command::kProbe;
  AgentConfig config;
  /// Set when the process ends here: 0 after --help, 2 on a bad command line
  /// (printed on stderr as "perfgate-agent: <what>: <reason>", or by CLI11).
  std::optional<int> exit_code;
};

/// Parses argv (and the --config file and PERFGATE_* variables) into a
/// configuration and checks every value the command will use: durations,
/// slowdowns, --set values, the ranks, --offline without --output, the token
/// file, the policy file and the sides of `ab`.
CommandLine ParseCommandLine(int argc, char** argv);

}  // namespace perfgate::agent
