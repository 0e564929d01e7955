// `perfgate-agent run --count`: the cases of a run counted beside their time
// (docs/statistics.md, "Counts"). Each case that measured is counted once
// more in one process of this very binary under Valgrind's callgrind (its
// `sample --counted`, the engine marking the timed samples), and the count
// is sent as a further part of the case, one sample per counted process
// after the timed ones: the coordinator stores it as a metric of the case,
// the history gate judges it as a count, the dashboard draws it beside time.
#pragma once

#include <functional>
#include <ostream>
#include <vector>

#include "absl/status/status.h"
#include "agent/config.h"
#include "common/run_types.h"
#include "suites/registry.h"

namespace perfgate::agent {

/// Counts every case of `cases` whose result in `done` measured samples
/// (ok, or timed out), and hands each count on to `send` (and appends it to `done`):
/// metrics instructions (and the sim_* ones with `--count cache`), the
/// sample indices following the case's timed ones. A case that cannot be
/// counted is said on `log` and left as it was; an error only when no
/// count can be taken at all (no valgrind, no binary) or `send` fails.
absl::Status CountRunCases(const AgentConfig& config, const std::vector<suites::CaseInstance>& cases,
                           std::vector<CaseResult>* done, const std::function<absl::Status(const CaseResult&)>& send,
                           std::ostream& log);

}  // namespace perfgate::agent
