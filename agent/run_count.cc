#include "agent/run_count.h"

#include <algorithm>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "agent/command_support.h"
#include "agent/counted.h"
#include "common/process.h"
#include "common/status_macros.h"

namespace perfgate::agent {
namespace {

// Seconds a counted process may take (as ab's --block-timeout by default).
constexpr double kCountedTimeoutS = 600;

}  // namespace

absl::Status CountRunCases(const AgentConfig& config, const std::vector<suites::CaseInstance>& cases,
                           std::vector<CaseResult>* done, const std::function<absl::Status(const CaseResult&)>& send,
                           std::ostream& log) {
  PERFGATE_ASSIGN_OR_RETURN(const std::string self, SelfExecutable());
  PERFGATE_ASSIGN_OR_RETURN(TempDir dir, TempDir::Make("perfgate-count-"));
  // The worker selects as this run did and adds the same injected work (a
  // flag of the program, before its command).
  std::vector<std::string> program = {self};
  for (const std::string& s : config.slowdown_specs) program.insert(program.end(), {"--inject-slowdown", s});
  for (const std::string& s : config.work_specs) program.insert(program.end(), {"--inject-work", s});
  std::set<std::string> selected;
  std::vector<BenchmarkId> listed;
  for (const suites::CaseInstance& c : cases) {
    if (selected.insert(c.id.Key()).second) listed.push_back(c.id);
  }
  CountOptions options;
  options.simulate = config.run_count == "cache";
  options.tool = CountToolOf(config.run_count);
  options.ncu = config.ncu;
  options.timeout_s = kCountedTimeoutS;
  options.work_dir = dir.path();
  // A few samples average the engine's own clock reads out of the count; the
  // counted process gets a time limit of its own (CountedAgent).
  CountedAgent counter(program, SampleWorkerArgs(config), listed, 3, options);
  const size_t timed = done->size();
  log << "\ncounting the measured cases by " << counter.ToolName() << ", one process each\n" << std::flush;
  for (size_t i = 0; i < timed; ++i) {
    const CaseResult& r = (*done)[i];
    const std::string key = r.benchmark.Key();
    // Cases that measured (ok, or stopped by the time limit), not derived ones.
    const bool measured = r.status == CaseStatus::kOk || r.status == CaseStatus::kTimedOut;
    if (!measured || r.samples.empty() || selected.count(key) == 0) continue;
    absl::StatusOr<CaseResult> counted = counter.Count(key);
    if (!counted.ok()) return counted.status();
    if (counted->status != CaseStatus::kOk || counted->samples.empty()) {
      log << "  " << key << ": not counted (" << ToString(counted->status) << ": " << counted->reason << ")\n";
      continue;
    }
    CaseResult part = CountPart(r, std::move(*counted));
    log << "  " << key << ":";
    for (size_t m = 0; m < part.metrics.size(); ++m) {
      log << absl::StrFormat(" %s %.6g %s", part.metrics[m].name, part.samples[0].values[m], part.metrics[m].unit);
    }
    log << "\n" << std::flush;
    PERFGATE_RETURN_IF_ERROR(send(part));
    done->push_back(std::move(part));
  }
  return absl::OkStatus();
}

}  // namespace perfgate::agent
