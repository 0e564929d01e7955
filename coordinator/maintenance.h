// Upkeep of the store the coordinator does by itself or on request: the
// monthly partitions of samples made ahead of time (at start and every hour
// while serving), and `perfgate-coordinator maintenance`, which makes them
// and applies a retention rule, for a scheduler (cron, a Kubernetes
// CronJob) to run.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <ostream>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/status.h"
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
  ~PartitionKeeper();
  PartitionKeeper(const PartitionKeeper&) = delete;
  PartitionKeeper& operator=(const PartitionKeeper&) = delete;

 private:
  void Loop();

  Store& store_;
  const std::chrono::seconds every_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
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
