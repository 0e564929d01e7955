// The runs of one sweep with their summaries, as the fleet comparison
// (gate/fleet.h) takes them: read through the run and summary repositories
// for Query.Fleet and the HTTP API's fleet view.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store.h"
#include "gate/fleet.h"

namespace perfgate::coordinator {

/// The complete runs of `sku` in `sweep`, newest first, each known by its
/// node (its agent when it has none). NOT_FOUND when the sweep has no
/// complete run of the SKU.
absl::StatusOr<std::vector<gate::FleetRun>> LoadFleet(Store& store, const std::string& sku,
                                                      const std::string& sweep);

}  // namespace perfgate::coordinator
