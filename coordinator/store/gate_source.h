// What a gate reads of the stored runs (coordinator/evaluate.h): a run, the
// runs that may be its baseline, their summaries with their processes'
// medians, their samples, and a node's calibrations. The Store reads them
// from PostgreSQL; InMemoryGateSource (memory_gate_source.h) keeps them in
// memory for the domain's tests without a database. One conformance suite
// holds both to the same behaviour (tests/coordinator/gate_source_test.cc).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store/records.h"

namespace perfgate::coordinator::store {

class GateSource {
 public:
  virtual ~GateSource() = default;
  /// One run. NOT_FOUND when unknown, INVALID_ARGUMENT when the id is not a
  /// UUID.
  virtual absl::StatusOr<RunRecord> GetRun(const std::string& run_id) = 0;
  /// The complete runs of q.branch on q.sku other than q.exclude_run_id (of
  /// q.allowed_commits when given), the latest finished first (then by id),
  /// at most q.limit (0: kBaselineRunRows). INVALID_ARGUMENT without a
  /// branch or a SKU.
  virtual absl::StatusOr<std::vector<RunRecord>> FindBaselineRuns(const BaselineQuery& q) = 0;
  /// A run's summaries in (benchmark, metric) byte order, with its
  /// processes' medians where they were stored. NOT_FOUND for an unknown run.
  virtual absl::StatusOr<std::vector<StoredSummary>> GetGateSummaries(const std::string& run_id) = 0;
  /// A run's unthrottled sample values per summarised (benchmark, metric),
  /// in sample order. NOT_FOUND for an unknown run.
  virtual absl::StatusOr<RunSamples> GetSamples(const std::string& run_id) = 0;
  /// Calibrations of `sku` on `node` measured in the environment with hash
  /// `environment_hash` and, with a max_age, no longer ago than that; empty
  /// strings match all. Ordered by SKU, node, benchmark, metric (bytes), then
  /// newest first.
  virtual absl::StatusOr<std::vector<CalibrationRecord>> GetCalibrations(
      const std::string& sku, const std::string& node, const std::string& environment_hash,
      std::optional<std::chrono::seconds> max_age) = 0;
};

}  // namespace perfgate::coordinator::store
