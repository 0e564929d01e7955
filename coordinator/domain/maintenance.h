// Upkeep of the store the coordinator does by itself or on request: the
// monthly partitions of samples made ahead of time (at start and every hour
// while serving), and `perfgate-coordinator maintenance`, which makes them
// and applies a retention rule, for a scheduler (cron, a Kubernetes
// CronJob) to run.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "common/periodic.h"
#include "coordinator/store.h"

namespace perfgate::coordinator {

/// Months of partitions made beyond the current one.
inline constexpr uint32_t kPartitionMonthsAhead = 2;

/// Calls Store::EnsurePartitions now and then every `every` on a thread of
/// its own until destroyed; a failure is written to stderr and tried again
/// at the next turn (two months ahead leave weeks to fix it).
class PartitionKeeper {
 public:
  PartitionKeeper(Store& store, std::chrono::seconds every = std::chrono::hours(1));
  /// Destroying it stops the thread (waits for a turn under way).

 private:
  void Ensure();

  Store& store_;
  const std::chrono::seconds every_;
  Periodic periodic_;  // last: it starts calling Ensure() once built
};

/// What one `maintenance` run does.
struct MaintenanceRequest {
  uint32_t months_ahead = kPartitionMonthsAhead;
  std::optional<uint32_t> expire_days;  // remove runs finished more than this many days ago
  std::string expire_branch;            // remove (only) runs of this branch
};

/// Makes the partitions, then applies the retention rule when the request
/// has one; says what it did on `out`.
absl::Status RunMaintenance(Store& store, const MaintenanceRequest& request, std::ostream& out);

}  // namespace perfgate::coordinator
