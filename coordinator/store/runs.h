// Agents and runs: registering an agent, opening a run (its environment
// stored once per content hash), and finding runs by id, branch, SKU, as a
// gate's baseline or as the runs of one sweep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/records.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

class RunRepository : protected Repository {
 public:
  /// Creates the agent or refreshes its hostname/version/last_seen; returns its id.
  absl::StatusOr<int64_t> RegisterAgent(const std::string& name, const std::string& hostname,
                                        const std::string& version);

  /// Creates a run (environment deduplicated by hash). Returns true when a run
  /// with this id already existed and is still running (a resend: nothing
  /// changes). NOT_FOUND for an unregistered agent; ALREADY_EXISTS when the id
  /// belongs to a finished run.
  absl::StatusOr<bool> OpenRun(const RunMeta& meta);

  /// One run. NOT_FOUND when unknown.
  absl::StatusOr<RunRecord> GetRun(const std::string& run_id);
  /// Newest first; empty filters match all.
  absl::StatusOr<std::vector<RunRecord>> ListRuns(const std::string& branch, const std::string& sku,
                                                  uint32_t limit);
  /// Complete runs matching q, newest finished first.
  absl::StatusOr<std::vector<RunRecord>> FindBaselineRuns(const BaselineQuery& q);
  /// Complete runs of a SKU in one sweep: those whose details name it as
  /// slurm_array_job_id or slurm_job_id, or whose ci_job is it; newest
  /// finished first. INVALID_ARGUMENT when sku or sweep is empty.
  absl::StatusOr<std::vector<RunRecord>> FindSweepRuns(const std::string& sku, const std::string& sweep);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
