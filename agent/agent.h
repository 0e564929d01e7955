// The agent's commands, behind a thin main: configuration in, exit code out.
#pragma once

#include <string>
#include <vector>

#include "measure/engine.h"

namespace perfgate::agent {

/// Everything the agent's commands read; filled from defaults, a config file,
/// PERFGATE_* variables and flags, in that order.
struct AgentConfig {
  std::vector<std::string> suites;
  std::vector<std::string> filters;
  std::vector<std::string> sets;  // NAME=V1,V2
  std::string coordinator = "127.0.0.1:50051";
  std::string token_file;
  std::string spool_dir = "/var/tmp/perfgate/spool";
  double rpc_timeout_s = 30;
  std::string agent_name;
  std::string repo;
  std::string branch;
  std::string commit;
  std::string trigger = "manual";
  std::string ci_job;
  std::string run_id_file;
  std::string output_file;  // result file of `run`, calibration file of `calibrate`; empty: none
  bool offline = false;     // measure without a coordinator (also: coordinator "none")
  std::vector<std::string> slowdowns;
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
  std::string time_budget;  // bounds the whole run: "60s", "2m", "90"; empty: none
  // `sample`, the worker `ab` runs on each side: one case by its exact key.
  std::string sample_case;
  unsigned sample_count = 10;  // exactly this many samples after warm-up
  // `ab`: the two builds as command prefixes, split with shell quoting rules.
  std::string ab_baseline;
  std::string ab_candidate;
  unsigned ab_rounds = 0;         // > 0: exactly this many rounds; 0: adaptive
  unsigned ab_block_samples = 0;  // > 0: samples per block; 0: sized by ab_block_seconds
  double ab_block_seconds = 0.5;
  unsigned ab_max_rounds = 30;
  double ab_case_budget_s = 60;   // one case, confirmation included
  bool ab_confirm = true;
  // `calibrate`: A/A processes per case and the seconds of samples each takes.
  unsigned calibrate_processes = 10;
  double calibrate_block_seconds = 0.5;
  std::string policy_file;  // gate policy (YAML); empty: the default policy
  std::string markdown_file, junit_file, json_file;  // report copies; empty: none
};

/// Exit codes of `perfgate-agent run`.
inline constexpr int kExitOk = 0;
inline constexpr int kExitCaseFailed = 1;  // a case failed verification or threw
inline constexpr int kExitError = 2;       // usage error, coordinator unreachable or refused the run
                                           // (an unreachable coordinator leaves the run in the spool)

int RunCommand(const AgentConfig& config);
/// Sends every run left in the spool (measured while the coordinator was
/// away, or by an agent that stopped) and removes what was stored.
int ReplayCommand(const AgentConfig& config);
int ListCommand(const AgentConfig& config);
int ProbeCommand();
/// Runs one case (config.sample_case, selected by its exact key) with
/// warm-up then exactly config.sample_count samples and prints it as a
/// perfgate result file on stdout, nothing else (messages go to stderr).
/// Exit 0 when the file was printed, whatever the case's status; 2 when the
/// case is unknown or the options are bad.
int SampleCommand(const AgentConfig& config);
/// Measures the selected cases on a baseline and a candidate build in
/// interleaved blocks, gates them in A/B mode, prints the report and, unless
/// offline, streams both sides as two runs. Exits as `perfgate gate` does:
/// 0 pass, 1 regression, 3 inconclusive, 2 usage or infrastructure error.
int AbCommand(const AgentConfig& config);

/// Measures this node's run-to-run spread of every selected case that can
/// run here with config.calibrate_processes A/A processes of the `sample`
/// worker (calibrate.h), prints the spreads and whether each case is fit to
/// gate single runs at the policy's tolerance, writes config.output_file
/// and, unless offline, stores the calibration on the coordinator. Exit 0
/// when every case was calibrated, 1 when one failed (the others are still
/// written and sent), 2 on a usage or coordinator error.
int CalibrateCommand(const AgentConfig& config);

}  // namespace perfgate::agent
