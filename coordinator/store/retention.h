// Retention and partitions: the monthly partitions of samples made ahead of
// time, and runs removed by age or branch with everything stored for them.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/records.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

class RetentionRepository : protected Repository {
 public:
  /// Creates the monthly partitions of samples (months in UTC) from the
  /// month of `now` to `months_ahead` months after it, so that rows never
  /// land in the default partition and a new month costs no scan of it.
  /// Returns how many were created (0 when all exist). A month whose rows
  /// already landed in the default partition (partitions made too late)
  /// gets them moved into its new partition in the same transaction.
  absl::StatusOr<uint32_t> EnsurePartitions(TimePoint now, uint32_t months_ahead = 2);
  /// Removes the runs `rule` matches with everything stored for them
  /// (samples, cases, batches, summaries, gate reports): at most 100 runs
  /// per transaction, so each is short. Then drops the monthly partitions
  /// of past months left empty. INVALID_ARGUMENT for a rule with neither an age nor a branch.
  absl::StatusOr<RetentionOutcome> ExpireRuns(const RetentionRule& rule);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
