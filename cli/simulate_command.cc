// `perfgate simulate`: the gate's false-alarm, inconclusive and detection
// rates on synthetic runs (gate/simulate.h), as a Markdown table.
#include <iostream>
#include <string>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "gate/simulate.h"

namespace perfgate::cli {

int SimulateCommand(const Config& c) {
  const gate::Policy& policy = c.policy.policy;
  const std::string table = gate::RenderSimulation(c.sim, policy, gate::Simulate(c.sim, policy));
  std::cout << table;
  return WriteFile(c.sim_out, table) ? 0 : kExitError;
}

}  // namespace perfgate::cli
