// Periodic work that coordinator replicas sharing one database do once
// between them: each job runs only while its coordinator holds the job's
// PostgreSQL advisory lock, taken without waiting; a replica that finds
// it held skips its turn, the holder is doing the work.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

/// The coordinator's periodic jobs, one advisory lock each.
enum class PeriodicJob { kPartitions, kRunExpiry };

class JobRepository : protected Repository {
 public:
  /// Calls `work` while this process holds `job`'s advisory lock and returns
  /// true with its status; false, without calling it, when another session
  /// (another replica) holds the lock. Should the lock's connection break
  /// while `work` runs, the lock is lost with it: each job is also safe
  /// when run twice at once (partitions are made under a transaction lock,
  /// a run is closed once under its row lock).
  absl::StatusOr<bool> RunExclusively(PeriodicJob job, const std::function<absl::Status()>& work);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
