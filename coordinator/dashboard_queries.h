// Read queries that only the HTTP API needs, beside the store's own: the
// verdicts of runs, the catalog of series, the sweeps a fleet view can show,
// the runs of a sweep as the fleet comparison takes them, and the runs still
// open. All read, none write.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store.h"
#include "gate/fleet.h"

namespace perfgate::coordinator {

/// The newest gate report of a run.
struct Verdict {
  int64_t report_id = 0;
  std::string outcome;
  std::string baseline_branch;
  TimePoint created_at{};
};
/// Every gate report of these runs, newest first per run (run id -> reports).
absl::StatusOr<std::map<std::string, std::vector<Verdict>>> GateVerdicts(
    Store& store, const std::vector<std::string>& run_ids);

/// What a series can be selected by.
struct Catalog {
  struct Metric {
    std::string benchmark, metric, unit;
  };
  std::vector<Metric> metrics;  // by benchmark key, then metric name
  std::vector<std::string> skus, branches, nodes;
};
absl::StatusOr<Catalog> GetCatalog(Store& store);

/// A group of complete runs of one SKU sharing a sweep id (the Slurm array
/// job id, else the Slurm job id, else the CI job), on at least
/// gate::kMinFleetNodes nodes.
struct Sweep {
  std::string sweep, sku;
  uint32_t runs = 0, nodes = 0;
  TimePoint finished_at{};
};
/// Newest first, at most 100; empty sku matches all.
absl::StatusOr<std::vector<Sweep>> ListSweeps(Store& store, const std::string& sku);

/// The runs of a sweep with their summaries, as gate::FindFleetOutliers takes
/// them. NOT_FOUND when the sweep has no complete run of the SKU.
absl::StatusOr<std::vector<gate::FleetRun>> LoadFleet(Store& store, const std::string& sku,
                                                      const std::string& sweep);

/// Runs opened and not closed.
absl::StatusOr<int64_t> CountOpenRuns(Store& store);

}  // namespace perfgate::coordinator
