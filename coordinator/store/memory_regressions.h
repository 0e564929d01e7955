// Regressions kept in memory: the RegressionRepository of
// coordinator/store/regressions.h without a database, for tests of the
// coordinator's domain (coordinator/regressions.h) and of what reads
// regressions. One conformance suite holds it to the PostgreSQL
// implementation's behaviour (tests/coordinator/regression_repository_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "coordinator/store/notifications.h"
#include "coordinator/store/regressions.h"

namespace perfgate::coordinator::store {

class InMemoryRegressionRepository final : public RegressionRepository {
 public:
  /// `now` stamps detections, triage moves and events.
  explicit InMemoryRegressionRepository(std::function<TimePoint()> now = [] { return std::chrono::system_clock::now(); });

  absl::StatusOr<std::optional<Regression>> SaveDetectedRegression(const DetectedRegression& d,
                                                                   const NotifyWith<Regression>& notify) override;
  absl::StatusOr<std::vector<Regression>> FindRegressions(const RegressionFilter& filter) override;
  absl::StatusOr<Regression> GetRegression(int64_t id) override;
  absl::StatusOr<Regression> ApplyTriage(const TriageChange& change, const NotifyWith<Regression>& notify) override;

  /// The notifications the PostgreSQL store would have put in its outbox
  /// with these changes (what their `notify` worded), oldest first.
  std::vector<NotificationEvent> Notifications() const;

 private:
  Regression* Find(int64_t id);  // under mu_
  void Notify(const NotifyWith<Regression>& notify, const Regression& r);  // under mu_

  std::function<TimePoint()> now_;
  mutable std::mutex mu_;
  std::vector<Regression> rows_;  // by id, with their events
  std::vector<NotificationEvent> notifications_;
  int64_t next_id_ = 1;
};

}  // namespace perfgate::coordinator::store
