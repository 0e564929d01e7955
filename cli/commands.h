// The commands of `perfgate`, each a short function over the validated
// Config (config.h) that returns the exit code. `compare` and `ingest` are
// CompareCommand (compare.h) and IngestCommand (ingest.h).
#pragma once

#include "cli/config.h"

namespace perfgate::cli {

/// gate_command.cc: judge a candidate run; 0 pass, 1 regression, 2 error,
/// 3 inconclusive.
int GateCommand(const Config& config);
/// gate_command.cc: show a stored report again; exits as its gate did.
int ReportCommand(const Config& config);
/// simulate_command.cc: the gate's rates on synthetic runs.
int SimulateCommand(const Config& config);
/// query_commands.cc: recent runs.
int RunsCommand(const Config& config);
/// query_commands.cc: one run with its per-case summaries.
int RunCommand(const Config& config);
/// query_commands.cc: a metric's history and its change points.
int HistoryCommand(const Config& config);
/// query_commands.cc: the outlier nodes of a sweep; 1 when one is worse.
int FleetCommand(const Config& config);
/// calibrations_command.cc: the nodes' stored noise floors.
int CalibrationsCommand(const Config& config);
/// health_command.cc: the coordinator's health; 0 when serving.
int HealthCommand(const Config& config);
/// regressions_command.cc: regressions found on tracked branches.
int RegressionsCommand(const Config& config);
/// regressions_command.cc: change a regression's state; 0 when changed.
int TriageCommand(const Config& config);
/// export_command.cc: result files written as Bencher Metric Format; 0 when
/// written, 2 when a file cannot be read or holds no samples, or the output
/// cannot be written.
int ExportCommand(const Config& config);
/// bisect_command.cc: bisect a regression or a range to its culprit, show
/// or resume a stored bisection; 0 when it ended (a culprit or none), 3
/// when it could only narrow the range, 2 on an error.
int BisectCommand(const Config& config);

}  // namespace perfgate::cli
