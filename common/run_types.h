// The run and result types shared by the agent, the suites and the
// coordinator: a run's metadata and environment, its cases, samples and
// metric summaries, and how it ended. They carry
// no wire or database concerns; wire/convert.h maps them to messages.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace perfgate {

/// Which way a metric improves.
enum class Direction { kHigherIsBetter, kLowerIsBetter };

/// One quantity a case reports: name unique within the case, unit, direction.
struct MetricSpec {
  std::string name;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  bool operator==(const MetricSpec&) const = default;
};

/// A benchmark case's identity: suite/name{k=v,...}, parameters sorted.
struct BenchmarkId {
  std::string suite;
  std::string name;
  std::map<std::string, std::string> params;

  /// The canonical key, e.g. "kernels/copy{bytes=268435456}".
  std::string Key() const;
  bool operator==(const BenchmarkId&) const = default;
};

/// One timed sample: a value per metric (same order as the case's metrics).
/// The largest sample index stored (PostgreSQL integer); readers and the
/// coordinator refuse larger ones instead of wrapping them.
inline constexpr uint32_t kMaxSampleIndex = 2147483647;

struct Sample {
  uint32_t index = 0;
  std::vector<double> values;
  bool throttled = false;
};

/// How a case ended on the agent.
enum class CaseStatus { kUnspecified, kOk, kTimedOut, kSkipped, kFailed };

/// What a case that could not measure a metric still knows of it: the value
/// lies at or above (kAtLeast) or at or below (kAtMost) `value`, in the
/// metric's unit. A knee beyond the rates a sweep covered is one: at least
/// the top rate, or below the lowest. Never a value: the gate judges it as
/// a bound (docs/statistics.md, "Bounds").
struct ValueBound {
  enum class Kind { kAtLeast, kAtMost };
  std::string metric;
  Kind kind = Kind::kAtLeast;
  double value = 0;
  bool operator==(const ValueBound&) const = default;
};
/// "at_least" or "at_most", as stored and in files; false for another name.
const char* ToString(ValueBound::Kind k);
bool ParseBoundKind(const std::string& s, ValueBound::Kind* out);

/// Samples of one case (or part of one) and, when complete, how it ended.
struct CaseResult {
  BenchmarkId benchmark;
  std::vector<MetricSpec> metrics;
  std::vector<Sample> samples;
  CaseStatus status = CaseStatus::kUnspecified;
  std::string reason;
  double noise = 0.0;
  /// Wall seconds the case took on the agent, warm-up included; 0 when not
  /// known. Sizes the blocks of an A/B job when sample_seconds is not known.
  double seconds = 0.0;
  /// Wall seconds of the timed samples alone (set-up, warm-up and throttle
  /// back-offs excluded); 0 when not known. Sizes the blocks of an A/B job:
  /// a case whose set-up is long next to its samples would otherwise get
  /// blocks far shorter than asked for.
  double sample_seconds = 0.0;
  /// Set on a case that ended without samples of `bound->metric` but with
  /// a bound on it (a knee beyond the swept rates).
  std::optional<ValueBound> bound;
};

/// Every field that can move a number, plus the normalized SKU key.
struct Environment {
  std::string sku;
  std::map<std::string, std::string> fields;

  /// Hex SHA-256 of the SKU and the sorted fields; equal content, equal hash.
  std::string Hash() const;
};

/// Why a run was made.
enum class Trigger { kUnspecified, kCi, kSweep, kManual };

/// How a run ended.
enum class RunStatus { kUnspecified, kRunning, kComplete, kFailed };

using TimePoint = std::chrono::system_clock::time_point;

/// What the agent knows about a run when it opens it.
struct RunMeta {
  std::string run_id;  // UUID made by the agent
  std::string agent_name;
  Environment environment;
  std::string repo;
  std::string branch;
  std::string commit;
  Trigger trigger = Trigger::kManual;
  std::string ci_job;
  std::string node;
  TimePoint started_at{};
  std::vector<std::string> parent_commits;  // nearest first
  // Volatile facts of this run (device UUIDs, temperatures, current clocks,
  // Slurm ids, ...): recorded and shown, never part of the environment.
  std::map<std::string, std::string> details;
};

/// Per-run statistics of one metric of one case.
struct MetricSummary {
  std::string benchmark;  // BenchmarkId::Key()
  std::string metric;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  uint32_t n = 0;            // unthrottled samples summarized
  uint32_t n_throttled = 0;  // samples left out
  double median = 0, mean = 0, stdev = 0, min = 0, max = 0, noise = 0;
  double mad = 0, p5 = 0, p95 = 0;
  double median_ci_low = 0, median_ci_high = 0;  // seeded 95 % bootstrap interval
  CaseStatus status = CaseStatus::kUnspecified;
  std::string reason;
  std::optional<ValueBound> bound;  // the case's bound on this metric, when it gave one
};

/// Names used in messages and storage for the enums above.
const char* ToString(Direction d);
const char* ToString(CaseStatus s);
const char* ToString(Trigger t);
const char* ToString(RunStatus s);
bool ParseDirection(const std::string& s, Direction* out);
bool ParseCaseStatus(const std::string& s, CaseStatus* out);
bool ParseTrigger(const std::string& s, Trigger* out);
bool ParseRunStatus(const std::string& s, RunStatus* out);

/// Sample indices gathered per benchmark key (sorted here): INVALID_ARGUMENT
/// "benchmark K sample index N appears twice; ..." for the first index seen
/// twice under a key. The one rule of ingest and of every reader of results.
absl::Status CheckSampleIndicesOnce(std::map<std::string, std::vector<uint32_t>> indices);
/// The same over cases, a case possibly split over several entries.
absl::Status CheckSampleIndicesOnce(const std::vector<CaseResult>& cases);

}  // namespace perfgate
