// The HTTP API's own answers (proto/perfgate/v1/api.proto), for the reads the
// gRPC services do not serve: the catalog, the sweeps, one series as the
// dashboard draws it, and the webhook outbox, from the store's records.
#pragma once

#include <cstddef>
#include <vector>

#include "coordinator/domain/regressions.h"
#include "coordinator/domain/series.h"
#include "coordinator/store.h"
#include "perfgate/v1/api.pb.h"

namespace perfgate::coordinator {

v1::CatalogResponse ToMessage(const store::Catalog& catalog);
v1::ListSweepsResponse ToMessage(const std::vector<store::Sweep>& sweeps);
/// Deliveries of the notification outbox, never an endpoint's address or
/// secret; a payload that is not a JSON object is left out of its entry.
v1::ListOutboxResponse ToMessage(const std::vector<store::OutboxEntry>& entries);

/// A series with the change points found in its valid runs; each change
/// names the point (index into points), commit and run where the new level
/// begins. `regressions` are the stored ones of the series. With max_points
/// > 0, a longer series is drawn in groups of runs (GroupPoints, each change
/// the first run of its group): each point then says how many runs it
/// stands for (`runs`) and its first run's commit and time.
v1::SeriesResponse SeriesMessage(const Series& series, const std::vector<Regression>& regressions,
                                 size_t max_points = 0);

}  // namespace perfgate::coordinator
