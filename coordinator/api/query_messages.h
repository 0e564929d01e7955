// The answers both front doors give to the same read (Query over gRPC and
// the HTTP API, docs/dashboard.md): the runs, one run, a sweep's fleet
// comparison, each built once here from the store and the domain as the
// messages of proto/perfgate/v1/query.proto; and the HTTP API's comparison
// of two runs. gRPC sends them; the HTTP API answers them in the API's JSON.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/store.h"
#include "gate/fleet.h"
#include "perfgate/v1/query.pb.h"

namespace perfgate::coordinator {

/// The newest `limit` runs of `branch` and `sku` (each "" for any), newest
/// first, each with its newest gate report; `data_as_of` set when the store
/// is a standby.
absl::StatusOr<v1::ListRunsResponse> RunsAnswer(Store& store, const std::string& branch, const std::string& sku,
                                                uint32_t limit);

/// Run `run_id` (a UUID, checked by the caller) with its environment, its
/// summaries, its gate reports (newest first) and `data_as_of`. NOT_FOUND
/// for an unknown run.
absl::StatusOr<v1::RunDetail> RunAnswer(Store& store, const std::string& run_id);

/// Runs `base_id` and `cand_id` (UUIDs, checked by the caller) side by
/// side: each metric both have, with the change a gate of the pair
/// estimates (evaluate.h, EstimateChanges), largest change first.
absl::StatusOr<v1::CompareResponse> CompareAnswer(Store& store, const std::string& base_id,
                                                  const std::string& cand_id);

/// The outlier nodes of `sku` in `sweep` under `options`, with the run of
/// each node compared and its environment's fields.
absl::StatusOr<v1::FleetResponse> FleetAnswer(Store& store, const std::string& sku, const std::string& sweep,
                                              const gate::FleetOptions& options);

}  // namespace perfgate::coordinator
