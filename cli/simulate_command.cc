// `perfgate simulate`: the gate's false-alarm, inconclusive and detection
// rates on synthetic runs (gate/simulate.h), or with --tail for changes of
// p99 latency on heavy-tailed serving runs (gate/simulate_tail.h), as a
// Markdown table.
#include <iostream>
#include <string>

#include "cli/command_support.h"
#include "cli/commands.h"
#include "gate/simulate.h"

namespace perfgate::cli {

int SimulateCommand(const Config& c) {
  const gate::Policy& policy = c.policy.policy;
  std::string table;
  if (c.sim_tail) {
    gate::TailSimulationOptions tail = c.sim_tail_options;
    tail.aa_trials = c.sim.aa_trials;
    tail.power_trials = c.sim.power_trials;
    tail.seed = c.sim.seed;
    table = gate::RenderTailSimulation(tail, policy, gate::SimulateTail(tail, policy));
  } else {
    table = gate::RenderSimulation(c.sim, policy, gate::Simulate(c.sim, policy));
  }
  std::cout << table;
  return WriteFile(c.sim_out, table) ? 0 : kExitError;
}

}  // namespace perfgate::cli
