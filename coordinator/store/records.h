// The records the storage repositories read and write, beside the run and
// result types of common/: what a stored run, summary, batch, close,
// retention rule and calibration look like to their callers. No database
// types: a caller of a repository needs only this header and the
// repository's own.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/calibration.h"
#include "common/run_types.h"

namespace perfgate::coordinator::store {

/// A stored run as the queries and the gate see it.
struct RunRecord {
  RunMeta meta;
  RunStatus status = RunStatus::kUnspecified;
  std::optional<TimePoint> finished_at;
  uint64_t samples = 0;  // samples stored for the run (a sample carries all metrics of its case)
  std::string failure_reason;
  std::vector<std::string> invalid_reasons;  // why it may not gate; empty when valid
};

/// A metric's summary as a gate reads it: with the medians of its processes
/// where CloseRun stored them (a run of several processes, see
/// process_medians.h); nullopt for a run of one process or one closed
/// before they were stored.
struct StoredSummary {
  MetricSummary summary;
  std::optional<std::vector<double>> process_medians;
};

/// Unthrottled sample values by (benchmark key, metric name).
using RunSamples = std::map<std::pair<std::string, std::string>, std::vector<double>>;

/// What StoreBatch did.
struct BatchOutcome {
  bool duplicate = false;       // (run, sequence) had been stored before
  uint32_t samples_stored = 0;  // samples written by this call (0 for a duplicate)
};

/// What CloseRun did.
struct CloseOutcome {
  uint32_t cases = 0;    // benchmark cases summarized
  uint64_t samples = 0;  // samples stored for the run
  bool resent = false;   // the run was closed already, as asked: this close changed nothing
};

/// Which runs may serve as the baseline of a gate.
struct BaselineQuery {
  std::string branch;                         // runs of this branch
  std::string sku;                            // on this SKU
  std::string exclude_run_id;                 // never the candidate itself
  std::vector<std::string> allowed_commits;   // when non-empty, only these commits
  uint32_t limit = 0;                         // the newest K; 0: kBaselineRunRows
};

/// Which runs ExpireRuns removes: finished runs (complete or failed) that
/// match every field given. A run still running is never removed.
struct RetentionRule {
  std::optional<TimePoint> finished_before;  // finished before this (none: any time)
  std::string branch;                        // of this branch (empty: any branch)
};

/// What ExpireRuns removed.
struct RetentionOutcome {
  uint64_t runs = 0;
  uint64_t samples = 0;              // sample rows (one per sample and metric)
  uint32_t partitions_dropped = 0;   // monthly partitions of samples left empty and dropped
};

/// A stored calibration of one metric of one case on one node.
struct CalibrationRecord {
  std::string sku;
  std::string node;
  std::string environment_hash;  // Environment::Hash() of where it was measured
  CalibrationEntry entry;
  TimePoint measured_at{};
};

}  // namespace perfgate::coordinator::store
