// Regressions as stored: each detected level shift of a series on a tracked
// branch, and every triage move made on it with who, when and why. What
// counts as a regression is decided by coordinator/regressions.h; this
// stores and reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/repository.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator::store {

/// The states a regression passes through.
inline constexpr const char* kRegressionStates[] = {"new",   "acknowledged", "investigating",
                                                    "fixed", "accepted",     "invalid"};

struct RegressionEvent {
  std::string from_state, to_state, actor, note, commit;
  TimePoint at{};
};

struct Regression {
  int64_t id = 0;
  std::string benchmark, metric, sku, branch, unit;
  Direction direction = Direction::kLowerIsBetter;
  std::string good_commit, bad_commit, first_bad_run_id;
  double median_before = 0, median_after = 0;
  double change = 0;  // relative, > 0 worse for the direction
  double p_value = 1;
  std::string state = "new";
  std::string fixed_by_commit;
  TimePoint detected_at{}, updated_at{};
  std::vector<RegressionEvent> events;  // oldest first
};

/// Which regressions to list; empty fields match all.
struct RegressionFilter {
  std::string state, branch, sku, benchmark;
  uint32_t limit = 100;  // at most 1000
};

/// One move of a regression's state.
struct TriageChange {
  int64_t id = 0;
  std::string state;   // acknowledged, investigating, fixed, accepted or invalid
  std::string note;    // why; required
  std::string actor;   // who; required
  std::string commit;  // the fixing commit; required for 'fixed', refused otherwise
};

/// A level shift detection found, to be stored unless the series holds it.
struct DetectedRegression {
  Regression regression;              // series, commits, first bad run, medians, size
  std::vector<std::string> nearby_runs;  // runs whose stored change is this one seen again
  std::string detected_after_run_id;  // the run whose close found it
};

/// The regression without its events as JSON, the one form the HTTP API
/// answers and webhooks carry: times in seconds since the epoch, a value
/// that is not finite null.
nlohmann::json RegressionJson(const Regression& r);

class RegressionRepository : protected Repository {
 public:
  /// Stores `d` in one transaction, serialised per series, with a 'new'
  /// event and its regression.new notifications; returns it. Nothing (nullopt) when a stored change of the
  /// series has its first bad run among d.nearby_runs: that change is
  /// moved to d's position and size while it is still 'new'.
  absl::StatusOr<std::optional<Regression>> SaveDetectedRegression(const DetectedRegression& d);
  /// Newest first, each with its events; the filter as given (checked by the caller).
  absl::StatusOr<std::vector<Regression>> FindRegressions(const RegressionFilter& filter);
  /// One regression with its events. NOT_FOUND when unknown.
  absl::StatusOr<Regression> GetRegression(int64_t id);
  /// Applies a checked change in one transaction (state, updated_at, an event
  /// row, regression.triage notifications) and returns the regression as it now is. NOT_FOUND for an unknown
  /// id; FAILED_PRECONDITION when the regression is already in that state.
  absl::StatusOr<Regression> ApplyTriage(const TriageChange& change);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
