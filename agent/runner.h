// Runs selected cases through the measurement engine, one after another, and
// hands each finished case to a sink (the coordinator stream).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/engine.h"
#include "common/model.h"
#include "suites/registry.h"

namespace perfgate::agent {

/// A known slowdown injected into the cases whose key matches `pattern`.
struct Slowdown {
  std::string pattern;  // glob over benchmark keys
  double fraction = 0;  // 0.25 = 25 % more time
};

/// Parses "CASE=PCT" (CASE a glob over keys, which may contain '=' themselves:
/// the last '=' separates), e.g. "kernels/triad*=25".
absl::StatusOr<Slowdown> ParseSlowdown(const std::string& spec);

/// The values of one --set: "V1,V2,..." as listed, or a geometric range
/// "MIN..MAX" (factor 2) / "MIN..MAX*F", where MIN and MAX may end in K, M or G
/// (binary), e.g. "8..1G" is 8, 16, ..., 1073741824.
absl::StatusOr<std::vector<std::string>> ExpandSetValues(const std::string& values);

struct RunnerOptions {
  EngineOptions engine;
  std::vector<Slowdown> slowdowns;
  ThrottleSource* throttle = nullptr;  // device clocks and reasons (NVML); null: none
};

/// Runs one case: exceptions from its body fail the case, never the agent.
CaseResult RunCase(const suites::CaseInstance& instance, const RunnerOptions& options);

/// Runs every case in order, calling `sink` after each; stops at the first
/// error the sink returns and returns it.
absl::Status RunCases(const std::vector<suites::CaseInstance>& cases, const RunnerOptions& options,
                      const std::function<absl::Status(CaseResult)>& sink);

/// A short table of the finished cases: key, metric, median, noise, samples, status.
std::string FormatSummaryTable(const std::vector<CaseResult>& cases);

}  // namespace perfgate::agent
