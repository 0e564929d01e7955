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
#include "common/regression_state.h"
#include "common/row_limits.h"
#include "common/run_types.h"
#include "coordinator/store/notifications.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

struct RegressionEvent {
  std::optional<RegressionState> from_state;  // none for the detection that made it
  RegressionState to_state = RegressionState::kNew;
  std::string actor, note, commit;
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
  RegressionState state = RegressionState::kNew;
  std::string fixed_by_commit;
  TimePoint detected_at{}, updated_at{};
  std::vector<RegressionEvent> events;  // oldest first
};

/// Which regressions to list; empty fields match all.
struct RegressionFilter {
  std::optional<RegressionState> state;
  std::string branch, sku, benchmark;
  uint32_t limit = 0;  // 0: kRegressionRows (common/row_limits.h)
};

/// One move of a regression's state.
struct TriageChange {
  int64_t id = 0;
  RegressionState state = RegressionState::kAcknowledged;  // any but kNew
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

/// The regressions as the domain (coordinator/regressions.h) reads and
/// writes them: in PostgreSQL by the Store (PgRegressionRepository), or in
/// memory (InMemoryRegressionRepository, memory_regressions.h), which runs
/// the domain's tests without a database. One conformance suite holds both
/// to the same behaviour (tests/coordinator/regression_repository_test.cc).
class RegressionRepository {
 public:
  virtual ~RegressionRepository() = default;
  /// Stores `d` with a 'new' event and what `notify` words for it (the
  /// regression.new notification), in one transaction serialised per
  /// series; returns it. Nothing (nullopt)
  /// when the series holds a change whose first bad run is d's own or among
  /// d.nearby_runs: such a change seen again is moved to d's position and
  /// size while it is still 'new' (and only when it is the one such change).
  virtual absl::StatusOr<std::optional<Regression>> SaveDetectedRegression(const DetectedRegression& d,
                                                                           const NotifyWith<Regression>& notify) = 0;
  /// Newest first (by detection, then id), each with its events; the filter
  /// as given (checked by the caller), a limit of 0 meaning 100.
  virtual absl::StatusOr<std::vector<Regression>> FindRegressions(const RegressionFilter& filter) = 0;
  /// One regression with its events. NOT_FOUND when unknown.
  virtual absl::StatusOr<Regression> GetRegression(int64_t id) = 0;
  /// Applies a checked change in one transaction (state, updated_at, the
  /// fixing commit, an event last among its events, what `notify` words for
  /// it: the regression.triage notification) and returns
  /// the regression as it now is. NOT_FOUND for an unknown id;
  /// FAILED_PRECONDITION when the regression is already in that state.
  virtual absl::StatusOr<Regression> ApplyTriage(const TriageChange& change, const NotifyWith<Regression>& notify) = 0;
};

/// The PostgreSQL implementation, one of the Store's repositories.
class PgRegressionRepository : public RegressionRepository, protected Repository {
 public:
  absl::StatusOr<std::optional<Regression>> SaveDetectedRegression(const DetectedRegression& d,
                                                                   const NotifyWith<Regression>& notify) override;
  absl::StatusOr<std::vector<Regression>> FindRegressions(const RegressionFilter& filter) override;
  absl::StatusOr<Regression> GetRegression(int64_t id) override;
  absl::StatusOr<Regression> ApplyTriage(const TriageChange& change, const NotifyWith<Regression>& notify) override;

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
