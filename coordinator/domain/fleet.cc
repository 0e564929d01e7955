#include "coordinator/domain/fleet.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace perfgate::coordinator {

absl::StatusOr<std::vector<gate::FleetRun>> LoadFleet(Store& store, const std::string& sku,
                                                      const std::string& sweep) {
  auto runs = store.FindSweepRuns(sku, sweep);
  PERFGATE_RETURN_IF_ERROR(runs);
  if (runs->empty()) {
    return absl::NotFoundError(absl::StrCat("no complete run of SKU ", sku, " in sweep ", sweep));
  }
  std::vector<gate::FleetRun> fleet;
  for (const RunRecord& r : *runs) {
    auto sums = store.GetSummaries(r.meta.run_id);
    PERFGATE_RETURN_IF_ERROR(sums);
    gate::FleetRun run;
    run.run_id = r.meta.run_id;
    // Runs ingested without a node are known by their agent, as in Query.Fleet.
    run.node = r.meta.node.empty() ? r.meta.agent_name : r.meta.node;
    run.finished_at = r.finished_at.value_or(r.meta.started_at);
    run.fields = r.meta.environment.fields;
    run.summaries = std::move(*sums);
    fleet.push_back(std::move(run));
  }
  return fleet;
}

}  // namespace perfgate::coordinator
