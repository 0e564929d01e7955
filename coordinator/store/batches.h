// Batches and samples: storing one batch of an open run (checked against
// what the run holds, samples written with COPY) and reading a run's samples.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/records.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

class BatchRepository : protected Repository {
 public:
  /// Stores one batch in one transaction: benchmarks and metrics upserted,
  /// samples written with COPY, (run, sequence) recorded. A batch already
  /// stored returns duplicate=true and writes nothing. NOT_FOUND for an
  /// unknown run, FAILED_PRECONDITION for a run that is not running,
  /// INVALID_ARGUMENT when a case's samples do not match its metrics or a
  /// case's metrics differ from those stored for it before.
  absl::StatusOr<BatchOutcome> StoreBatch(const std::string& run_id, uint64_t sequence,
                                          const std::vector<CaseResult>& cases);
  /// The unthrottled sample values of every metric of a run, in sample order.
  absl::StatusOr<RunSamples> GetSamples(const std::string& run_id);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
