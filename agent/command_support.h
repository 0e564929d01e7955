// What the agent's commands share (agent.cc, calibrate.cc): this process's
// place among ranks, selecting cases, reading the policy and the coordinator
// options, the flags a `sample` worker gets, and how an error ends a command.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "agent/ab.h"
#include "agent/agent.h"
#include "client/coordinator_client.h"
#include "gate/policy.h"
#include "suites/collectives/world.h"
#include "suites/registry.h"

namespace perfgate::agent {

/// Prints "perfgate-agent: <what>: <message>" on stderr; returns kExitError.
int Fail(const absl::Status& s, const char* what);

/// This process's place among the ranks of a multi-rank run: the flags, else
/// the Slurm task environment (srun sets it for every task), else rank 0 of 1.
absl::StatusOr<suites::collectives::WorldOptions> ResolveWorld(const AgentConfig& config);

/// The cases config's --suite/--filter/--set select from this build's registry.
absl::StatusOr<std::vector<suites::CaseInstance>> SelectCases(const AgentConfig& config);

/// The coordinator client's options: address, timeout and the token read
/// from config.token_file; INVALID_ARGUMENT when that file holds none.
absl::StatusOr<client::ClientOptions> MakeClientOptions(const AgentConfig& config);

/// The policy in `path`, or the default policy when `path` is empty;
/// NOT_FOUND or INVALID_ARGUMENT (naming the line) otherwise.
absl::StatusOr<gate::Policy> LoadPolicy(const std::string& path);

/// The flags every `sample` worker gets after its own: the selection
/// (--suite, --filter, --set) and the per-case --timeout, so that a key names
/// the same case in the worker as here.
std::vector<std::string> SampleWorkerArgs(const AgentConfig& config);

/// The selected cases that can run on this node, as the measuring commands
/// take them (identity and metrics); a line on `log` for each one skipped
/// here, with the case's reason.
std::vector<AbCase> RunnableCases(const std::vector<suites::CaseInstance>& selected, std::ostream& log);

}  // namespace perfgate::agent
