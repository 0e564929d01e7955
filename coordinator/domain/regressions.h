// Regressions on tracked branches and their triage (docs/dashboard.md).
//
// When a complete, valid run of a tracked branch closes, DetectRegressions
// reads every series the run reported (benchmark, metric, the run's SKU and
// branch), asks the domain which shifts are regressions
// (gate/regression_detection.h: change points over the valid runs worse than
// the policy's tolerance), and stores each as one regression: the series, the last good and first bad
// commit, the size, the first bad run. A change already stored for the
// series within kSameChangeRuns runs of the new one is the same change, so
// every later run that sees the step again adds nothing; while that change
// is still 'new', its position and size follow the newer estimate (with a
// few runs on the new level, E-divisive may place a step a run early).
//
// Triage moves a regression from 'new' to acknowledged / investigating and
// on to fixed (with the fixing commit), accepted or invalid; every move is
// kept with who made it, when, and a note.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store.h"
#include "coordinator/store/regressions.h"
#include "gate/policy.h"
#include "gate/regression_detection.h"

namespace perfgate::coordinator {

using store::Regression;
using store::RegressionEvent;
using store::RegressionFilter;
using store::TriageChange;

using gate::kSameChangeRuns;

/// Newest first, each with its events. INVALID_ARGUMENT for a limit above
/// 1000.
absl::StatusOr<std::vector<Regression>> ListRegressions(store::RegressionRepository& store,
                                                        const RegressionFilter& filter);

/// Applies the change in one transaction (state, updated_at, an event row)
/// and returns the regression as it now is. INVALID_ARGUMENT naming the bad
/// field (a move to 'new', no note or actor, a fixing commit missing for
/// 'fixed' or given for another state); NOT_FOUND for an unknown id; FAILED_PRECONDITION when the
/// regression is already in that state.
absl::StatusOr<Regression> Triage(store::RegressionRepository& store, const TriageChange& change);

/// The state named `name` of a request's field `field`; INVALID_ARGUMENT
/// naming the field and the states otherwise.
absl::StatusOr<RegressionState> RegressionStateOf(const std::string& field, const std::string& name);

/// What detection reads and writes: the Store for all three, or the
/// in-memory twins (store/memory_gate_source.h, memory_regressions.h).
struct DetectionStores {
  store::GateSource& runs;
  store::SeriesSource& series;
  store::RegressionRepository& regressions;
};

/// Checks the series of run `run_id` for new regressions as described above
/// and returns the ones it stored. Nothing for a run that is not complete,
/// is invalid for gating, or has no summaries.
absl::StatusOr<std::vector<Regression>> DetectRegressions(const DetectionStores& stores, const std::string& run_id,
                                                          const gate::Policy& policy);
inline absl::StatusOr<std::vector<Regression>> DetectRegressions(Store& store, const std::string& run_id,
                                                                 const gate::Policy& policy) {
  return DetectRegressions(DetectionStores{store, store, store}, run_id, policy);
}

}  // namespace perfgate::coordinator
