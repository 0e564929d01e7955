// What the dashboard selects by: the catalog of series (benchmarks and
// metrics, SKUs, branches, nodes), the sweeps a fleet view can show, and
// the runs still open. All read, none write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

/// What a series can be selected by.
struct Catalog {
  struct Metric {
    std::string benchmark, metric, unit;
  };
  std::vector<Metric> metrics;  // by benchmark key, then metric name
  std::vector<std::string> skus, branches, nodes;
};

/// A group of complete runs of one SKU sharing a sweep id (the Slurm array
/// job id, else the Slurm job id, else the CI job), on at least
/// gate::kMinFleetNodes nodes.
struct Sweep {
  std::string sweep, sku;
  uint32_t runs = 0, nodes = 0;
  TimePoint finished_at{};
};

/// How far a standby's data is behind its primary.
struct ReplicaLag {
  double seconds = 0;   // 0 when it has replayed all it received
  TimePoint as_of{};    // commit time of the newest transaction it holds (now when none is behind)
};

class CatalogRepository : protected Repository {
 public:
  /// Every stored metric and the SKUs, branches and nodes of stored runs.
  absl::StatusOr<Catalog> GetCatalog();
  /// Newest first, at most 100; empty sku matches all.
  absl::StatusOr<std::vector<Sweep>> ListSweeps(const std::string& sku);
  /// Runs opened and not closed.
  absl::StatusOr<int64_t> CountOpenRuns();
  /// On a streaming-replication standby: how far its data is behind the
  /// primary's; nullopt on a primary (nothing to lag behind).
  absl::StatusOr<std::optional<ReplicaLag>> StandbyLag();

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
