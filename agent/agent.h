// The agent's commands, behind a thin main: a configuration parsed and
// validated at start (config.h) in, exit code out. One file per command:
// run_command.cc, replay_command.cc, ab_command.cc, calibrate.cc and
// small_commands.cc (list, probe, sample).
#pragma once

#include "agent/config.h"
#include "common/exit_codes.h"

namespace perfgate::agent {

/// `perfgate-agent run` exits (common/exit_codes.h) kExitPass, kExitRegression
/// when a case failed verification or threw, or kExitError for a usage error
/// or a coordinator that was unreachable (the run stays in the spool) or
/// refused the run.

int RunCommand(const AgentConfig& config);
/// Sends every run left in the spool (measured while the coordinator was
/// away, or by an agent that stopped) and removes what was stored.
int ReplayCommand(const AgentConfig& config);
int ListCommand(const AgentConfig& config);
int ProbeCommand(const AgentConfig& config);
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
