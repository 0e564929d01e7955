// The JSON the HTTP API answers with (docs/dashboard.md lists the fields):
// the store's records written with nlohmann/json. Times are seconds since
// the epoch (UTC) as numbers; a value the store holds as NULL or NaN is null.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "coordinator/regressions.h"
#include "coordinator/series.h"
#include "coordinator/store.h"
#include "gate/fleet.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator {

using store::Catalog;
using store::Sweep;
using store::Verdict;

nlohmann::json ToJson(const RunRecord& run);
nlohmann::json ToJson(const MetricSummary& summary);
nlohmann::json ToJson(const Verdict& verdict);
nlohmann::json ToJson(const Regression& regression);
nlohmann::json ToJson(const Catalog& catalog);
nlohmann::json ToJson(const Sweep& sweep);
nlohmann::json ToJson(const gate::FleetReport& report);
/// A series with the change points found in its valid runs; each change
/// names the point (index into points), commit and run where the new level
/// begins. `regressions` are the stored ones of the series.
nlohmann::json SeriesJson(const Series& series, const std::vector<Regression>& regressions);
/// Two runs' summaries side by side, one row per metric both have, largest
/// relative change (worse or better) first.
/// When reads come from a standby, the moment its data is as of (the
/// newest transaction it replayed; now when it is caught up); null when
/// they come from the primary.
nlohmann::json DataAsOfJson(const std::optional<store::ReplicaLag>& lag);
nlohmann::json CompareJson(const RunRecord& base, const std::vector<MetricSummary>& base_sums,
                           const RunRecord& cand, const std::vector<MetricSummary>& cand_sums);

}  // namespace perfgate::coordinator
