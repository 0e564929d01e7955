// The JSON the HTTP API answers with (docs/dashboard.md lists the fields):
// the store's records written with nlohmann/json. Times are seconds since
// the epoch (UTC) as numbers; a value the store holds as NULL or NaN is null.
#pragma once

#include <map>
#include <string>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/regressions.h"
#include "coordinator/series.h"
#include "coordinator/store.h"
#include "gate/fleet.h"
#include "gate/gate.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator {

using store::Catalog;
using store::Sweep;
using store::Verdict;

nlohmann::json ToJson(const RunRecord& run);
nlohmann::json ToJson(const MetricSummary& summary);
nlohmann::json ToJson(const Verdict& verdict);
nlohmann::json ToJson(const Catalog& catalog);
nlohmann::json ToJson(const Sweep& sweep);
nlohmann::json ToJson(const gate::FleetReport& report);
/// A delivery of the notification outbox, never its endpoint's secret.
nlohmann::json ToJson(const store::OutboxEntry& entry);
/// A series with the change points found in its valid runs; each change
/// names the point (index into points), commit and run where the new level
/// begins. `regressions` are the stored ones of the series, each as the
/// regression routes answer it (v1::Regression in the API's JSON). With max_points
/// > 0, a longer series is drawn in groups of runs (GroupPoints, each change
/// the first run of its group): each point then says how many runs it
/// stands for (`runs`) and its first run's commit and time.
nlohmann::json SeriesJson(const Series& series, const std::vector<Regression>& regressions,
                          size_t max_points = 0);
/// When reads come from a standby, the moment its data is as of (the
/// newest transaction it replayed; now when it is caught up); null when
/// they come from the primary.
nlohmann::json DataAsOfJson(const std::optional<store::ReplicaLag>& lag);
/// Two runs' summaries side by side, one row per metric both have, largest
/// change (worse or better) first; each row's change, its interval and the
/// method are the gate's estimate (`changes`, evaluate.h's EstimateChanges).
nlohmann::json CompareJson(const RunRecord& base, const std::vector<MetricSummary>& base_sums,
                           const RunRecord& cand, const std::vector<MetricSummary>& cand_sums,
                           const std::vector<gate::MetricVerdict>& changes);

}  // namespace perfgate::coordinator
