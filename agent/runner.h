// Runs selected cases through the measurement engine, one after another, and
// hands each finished case to a sink (the coordinator stream).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "measure/engine.h"
#include "common/run_types.h"
#include "suites/registry.h"

namespace perfgate::agent {

/// A known change injected into the cases whose key matches `pattern`: a
/// slowdown (busy work sized by the case's time) or added work (the case
/// does more of its own work, so its counts grow by exactly that much).
struct Injection {
  std::string pattern;  // glob over benchmark keys
  double fraction = 0;  // 0.25 = 25 % more time, or 25 % more work
};

/// Parses "CASE=PCT" given to `flag` (CASE a glob over keys, which may
/// contain '=' themselves: the last '=' separates), e.g. "kernels/triad*=25".
absl::StatusOr<Injection> ParseInjection(const std::string& flag, const std::string& spec);

/// The values of one --set: "V1,V2,..." as listed, or a geometric range
/// "MIN..MAX" (factor 2) / "MIN..MAX*F", where MIN and MAX may end in K, M or G
/// (binary), e.g. "8..1G" is 8, 16, ..., 1073741824.
absl::StatusOr<std::vector<std::string>> ExpandSetValues(const std::string& values);

struct RunnerOptions {
  EngineOptions engine;
  std::vector<Injection> slowdowns;   // --inject-slowdown
  std::vector<Injection> added_work;  // --inject-work
  ThrottleSource* throttle = nullptr;  // device clocks and reasons (NVML); null: none
  double time_budget_s = 0;  // bounds the whole run; 0 means no bound
};

/// Parses a duration in seconds: "90", "60s", "2m", "1.5h"; INVALID_ARGUMENT
/// for anything else or for a value that is not positive.
absl::StatusOr<double> ParseDuration(const std::string& text);

/// The timeout of the next case under a run's time budget: the case's own
/// timeout, or the budget left shared equally by the cases left when that
/// is less. `budget_s` 0 means no budget.
double BudgetedTimeout(double case_timeout_s, double budget_s, double elapsed_s, size_t cases_left);

/// Runs one case: exceptions from its body fail the case, never the agent.
/// Added work for a case that cannot add to its own work (State::AddWork)
/// fails the case with the reason.
CaseResult RunCase(const suites::CaseInstance& instance, const RunnerOptions& options);

/// Runs every case in order, calling `sink` after each; stops at the first
/// error the sink returns and returns it. Under a time budget each case's
/// timeout is BudgetedTimeout(), and the cases not started when the budget
/// is spent are handed to the sink as skipped, with the reason. After the
/// last case, what each case spec draws from its results (CaseSpec::derive,
/// such as the knee of a rate sweep) goes to the sink too.
absl::Status RunCases(const std::vector<suites::CaseInstance>& cases, const RunnerOptions& options,
                      const std::function<absl::Status(CaseResult)>& sink,
                      Clock& clock = SteadyClock());

/// One line per case, its key and whether it would run here or skip and
/// why, then one indented line per metric: name, unit, direction.
std::string FormatCaseList(const std::vector<suites::CaseInstance>& cases);

/// A short table of the finished cases: key, metric, median, noise, samples, status.
std::string FormatSummaryTable(const std::vector<CaseResult>& cases);

}  // namespace perfgate::agent
