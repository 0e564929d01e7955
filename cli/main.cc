// perfgate: the command a CI step or a person runs against a coordinator —
// gate a candidate run, compare two runs or result files, list runs, show one
// run, print a metric's history with its change points, name the outlier
// nodes of a sweep, list the nodes' calibrated noise floors, store result
// files as runs, export them as Bencher's format, bisect a regression to
// its culprit. The command line
// is parsed and checked in config.cc; each command lives in its own file.
#include <iostream>

#include "cli/commands.h"
#include "cli/compare.h"
#include "cli/command_support.h"
#include "cli/config.h"
#include "cli/ingest.h"

namespace {

using perfgate::cli::Command;

int Run(const perfgate::cli::Config& c) {
  namespace cli = perfgate::cli;
  switch (c.command) {
    case Command::kGate: return cli::GateCommand(c);
    case Command::kReport: return cli::ReportCommand(c);
    case Command::kSimulate: return cli::SimulateCommand(c);
    case Command::kRuns: return cli::RunsCommand(c);
    case Command::kRun: return cli::RunCommand(c);
    case Command::kHistory: return cli::HistoryCommand(c);
    case Command::kFleet: return cli::FleetCommand(c);
    case Command::kCalibrations: return cli::CalibrationsCommand(c);
    case Command::kHealth: return cli::HealthCommand(c);
    case Command::kIngest: return cli::IngestCommand(c.ingest);
    case Command::kCompare: return cli::CompareCommand(c.compare, std::cout, std::cerr);
    case Command::kRegressions: return cli::RegressionsCommand(c);
    case Command::kTriage: return cli::TriageCommand(c);
    case Command::kExport: return cli::ExportCommand(c);
    case Command::kBisect: return cli::BisectCommand(c);
  }
  return perfgate::kExitError;
}

}  // namespace

int main(int argc, char** argv) {
  perfgate::cli::Config config;
  if (auto exit_code = perfgate::cli::ParseCommandLine(argc, argv, config, std::cout, std::cerr)) {
    return *exit_code;
  }
  return Run(config);
}
