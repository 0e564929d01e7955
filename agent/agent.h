// The agent's commands, behind a thin main: configuration in, exit code out.
#pragma once

#include <string>
#include <vector>

#include "common/engine.h"

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
  std::string output_file;  // perfgate result file written at the end of `run`; empty: none
  bool offline = false;     // measure without a coordinator (also: coordinator "none")
  std::vector<std::string> slowdowns;
  EngineOptions engine;
  double max_noise_pct = 0.5;
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

}  // namespace perfgate::agent
