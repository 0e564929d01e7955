// Bisections as stored (migration 0011): the job of `perfgate bisect` with
// its plan and settings, every probe measured, and how it ended. A culprit
// found for a stored regression is also written to that regression's
// triage record, in the same transaction.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/bisection_state.h"
#include "common/run_types.h"
#include "coordinator/store/notifications.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

/// A number not measured (stored as NULL).
inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

/// One measurement of one commit against the good endpoint.
struct BisectionProbe {
  std::string commit;
  int attempt = 1;
  ProbeVerdict verdict = ProbeVerdict::kFailed;
  std::string benchmark, metric;  // the case judged (sets the job's when it has none)
  double change = kNotMeasured, ci_low = kNotMeasured, ci_high = kNotMeasured, p_value = kNotMeasured;
  double threshold = 0;
  int rounds = 0;
  std::string note;
  TimePoint at{};
};

/// How a bisection ended.
struct BisectionOutcome {
  BisectionState state = BisectionState::kRunning;  // kCulprit, kNoCulprit or kRange once ended
  double regression_size = kNotMeasured;
  std::string culprit;
  double change = kNotMeasured, ci_low = kNotMeasured, ci_high = kNotMeasured;
  std::string range_good, range_bad;
  std::string summary;
  std::string triage_note;  // for a culprit of a stored regression: its triage record's line
};

/// An ended bisection as its notification names it: its outcome, and the
/// regression it was started for (0 for an explicit range) with that
/// regression's branch and SKU.
struct FinishedBisection {
  int64_t id = 0;
  BisectionOutcome outcome;
  int64_t regression_id = 0;
  std::string branch, sku;
};

struct Bisection {
  int64_t id = 0;
  int64_t regression_id = 0;  // 0: an explicit range
  std::string good_commit, bad_commit, benchmark, metric;
  std::string commits_json = "[]";   // the plan, oldest first (a JSON array of strings)
  std::string settings_json = "{}";  // how probes are built and measured (a JSON object)
  std::string created_by;
  BisectionState state = BisectionState::kRunning;  // stored as its name (common/bisection_state.h)
  BisectionOutcome outcome;  // empty while running
  TimePoint created_at{}, updated_at{};
  std::vector<BisectionProbe> probes;  // oldest first
};

class BisectionRepository : protected Repository {
 public:
  /// Stores a new running bisection and returns it. NOT_FOUND when its
  /// regression does not exist.
  absl::StatusOr<Bisection> CreateBisection(const Bisection& b);
  /// One bisection with its probes. NOT_FOUND when unknown.
  absl::StatusOr<Bisection> GetBisection(int64_t id);
  /// Newest first, without probes; only those of `regression_id` when not 0.
  absl::StatusOr<std::vector<Bisection>> ListBisections(int64_t regression_id, uint32_t limit);
  /// Adds a probe to a running bisection. NOT_FOUND for an unknown one,
  /// FAILED_PRECONDITION when it has ended, ALREADY_EXISTS when that
  /// commit's attempt is stored.
  absl::StatusOr<Bisection> AddBisectionProbe(int64_t id, const BisectionProbe& probe);
  /// Ends a running bisection; with a culprit and a regression, adds
  /// outcome.triage_note to the regression's triage record (an event that
  /// keeps its state), with what `notify` words for it in the outbox, all
  /// in one transaction.
  absl::StatusOr<Bisection> FinishBisection(int64_t id, const BisectionOutcome& outcome, const std::string& actor,
                                            const NotifyWith<FinishedBisection>& notify = {});

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
