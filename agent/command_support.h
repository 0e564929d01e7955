// What the agent's commands and their configuration share: this process's
// place among ranks, selecting cases, the run a command sends, the flags a
// `sample` worker gets, and how an error ends a command.
#pragma once

#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/ab.h"
#include "agent/agent.h"
#include "agent/probe.h"
#include "common/run_types.h"
#include "measure/nvml.h"
#include "suites/collectives/world.h"
#include "suites/registry.h"

namespace perfgate::agent {

/// Prints "perfgate-agent: <what>: <message>" on stderr; returns kExitError.
int Fail(const absl::Status& s, const char* what);

/// This process's place among the ranks of a multi-rank run: the flags, else
/// the Slurm task environment (srun sets it for every task), else rank 0 of 1.
absl::StatusOr<suites::collectives::WorldOptions> ResolveWorld(const AgentConfig& config);

/// The cases config's --suite/--filter/--set (config.set_values) select from this build's registry.
absl::StatusOr<std::vector<suites::CaseInstance>> SelectCases(const AgentConfig& config);

/// SelectCases for a command that measures: INVALID_ARGUMENT when nothing
/// is selected, echoing the --suite, --filter and --set given and naming
/// the `perfgate-agent list` that shows what they could select.
absl::StatusOr<std::vector<suites::CaseInstance>> SelectSomeCases(const AgentConfig& config);

/// The values of each --set NAME=V1,V2 (ranges expanded by ExpandSetValues).
absl::StatusOr<std::map<std::string, std::vector<std::string>>> ParseSets(const std::vector<std::string>& sets);

/// The trigger named by `s`; manual when it names none.
Trigger ParseTriggerOrManual(const std::string& s);

/// What every run this agent sends is of: a fresh id, the agent's name (the
/// hostname by default), the probed environment and details, the repository,
/// branch and commit (from git when not given; branch "local" without git),
/// trigger, CI job, node and start time.
RunMeta RunMetaOf(const AgentConfig& config, const ProbeResult& probe);

/// The throttle source for device cases: CUDA device 0's clocks through
/// NVML, or null where there is none.
std::unique_ptr<NvmlThrottleSource> ThrottleOf(const ProbeResult& probe);

/// The running binary (/proc/self/exe), so that a worker process measures
/// this very build; FAILED_PRECONDITION when it cannot be read.
absl::StatusOr<std::string> SelfExecutable();

/// The flags every `sample` worker gets after its own: the selection
/// (--suite, --filter, --set) and the per-case --timeout, so that a key names
/// the same case in the worker as here.
std::vector<std::string> SampleWorkerArgs(const AgentConfig& config);

/// The selected cases that can run on this node, as the measuring commands
/// take them (identity and metrics); a line on `log` for each one skipped
/// here, with the case's reason.
std::vector<AbCase> RunnableCases(const std::vector<suites::CaseInstance>& selected, std::ostream& log);

}  // namespace perfgate::agent
