// perfgate-agent: probe the machine, run suites through the measurement
// engine, stream every sample to the coordinator. The command line is parsed
// and checked whole (config.h) before the command (agent.h) runs.
#include "agent/agent.h"
#include "agent/config.h"

int main(int argc, char** argv) {
  using namespace perfgate::agent;
  const CommandLine line = ParseCommandLine(argc, argv);
  if (line.exit_code) return *line.exit_code;
  const AgentConfig& config = line.config;
  switch (line.command) {
    case Command::kRun: return RunCommand(config);
    case Command::kReplay: return ReplayCommand(config);
    case Command::kList: return ListCommand(config);
    case Command::kProbe: return ProbeCommand(config);
    case Command::kAb: return AbCommand(config);
    case Command::kSample: return SampleCommand(config);
    case Command::kCalibrate: return CalibrateCommand(config);
  }
  return perfgate::kExitError;
}
