// Closing runs and their summaries: a close computes each metric's summary
// (and, for a run of several processes, their medians) from the stored
// samples; runs whose agent went silent are closed as failed; the gate and
// the queries read the summaries back.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/records.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

class SummaryRepository : protected Repository {
 public:
  /// Finishes a run: checks batches 1..last_sequence are all stored
  /// (FAILED_PRECONDITION naming the first missing one otherwise), computes
  /// per-metric summaries over unthrottled samples with common/stats (and,
  /// for a run of several processes, their medians), records
  /// each case's final status, sets status and finished_at, and stores the
  /// reasons the run is invalid for gating (none: valid). Closing an already
  /// closed run with the same status is accepted and changes nothing.
  absl::StatusOr<CloseOutcome> CloseRun(const std::string& run_id, RunStatus status,
                                        uint64_t last_sequence, const std::string& reason,
                                        const std::vector<std::string>& invalid_reasons = {});

  /// Closes as failed every running run not heard of (OpenRun, a batch) for
  /// max_silence_s: its agent is gone. Returns the ids this call closed (a
  /// run closed meanwhile by its agent or another coordinator is not one).
  absl::StatusOr<std::vector<std::string>> ExpireSilentRuns(double max_silence_s);

  /// Per-metric summaries of a run, ordered by benchmark key then metric.
  absl::StatusOr<std::vector<MetricSummary>> GetSummaries(const std::string& run_id);
  /// The same with each metric's stored process medians.
  absl::StatusOr<std::vector<StoredSummary>> GetGateSummaries(const std::string& run_id);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
