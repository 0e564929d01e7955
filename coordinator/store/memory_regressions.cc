#include "coordinator/store/memory_regressions.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace perfgate::coordinator::store {
namespace {

bool SameSeries(const Regression& a, const Regression& b) {
  return a.benchmark == b.benchmark && a.metric == b.metric && a.sku == b.sku && a.branch == b.branch;
}

bool Matches(const Regression& r, const RegressionFilter& f) {
  return (!f.state || r.state == *f.state) && (f.branch.empty() || r.branch == f.branch) &&
         (f.sku.empty() || r.sku == f.sku) && (f.benchmark.empty() || r.benchmark == f.benchmark);
}

}  // namespace

InMemoryRegressionRepository::InMemoryRegressionRepository(std::function<TimePoint()> now) : now_(std::move(now)) {}

void InMemoryRegressionRepository::Notify(const NotifyWith<Regression>& notify, const Regression& r) {
  if (!notify) return;
  if (std::optional<NotificationEvent> e = notify(r)) notifications_.push_back(*std::move(e));
}

Regression* InMemoryRegressionRepository::Find(int64_t id) {
  auto it = std::find_if(rows_.begin(), rows_.end(), [id](const Regression& r) { return r.id == id; });
  return it == rows_.end() ? nullptr : &*it;
}

absl::StatusOr<std::optional<Regression>> InMemoryRegressionRepository::SaveDetectedRegression(
    const DetectedRegression& d, const NotifyWith<Regression>& notify) {
  std::lock_guard<std::mutex> lock(mu_);
  const Regression& r = d.regression;
  std::vector<Regression*> seen;
  bool same_first_bad = false;
  for (Regression& row : rows_) {
    if (!SameSeries(row, r)) continue;
    same_first_bad = same_first_bad || row.first_bad_run_id == r.first_bad_run_id;
    if (std::find(d.nearby_runs.begin(), d.nearby_runs.end(), row.first_bad_run_id) != d.nearby_runs.end()) {
      seen.push_back(&row);
    }
  }
  if (same_first_bad) return std::optional<Regression>();
  if (!seen.empty()) {
    if (seen.size() == 1 && seen.front()->state == RegressionState::kNew) {
      Regression& moved = *seen.front();
      moved.good_commit = r.good_commit;
      moved.bad_commit = r.bad_commit;
      moved.first_bad_run_id = r.first_bad_run_id;
      moved.median_before = r.median_before;
      moved.median_after = r.median_after;
      moved.change = r.change;
      moved.p_value = r.p_value;
      moved.updated_at = now_();
    }
    return std::optional<Regression>();
  }
  Regression stored = r;
  stored.id = next_id_++;
  stored.state = RegressionState::kNew;
  stored.fixed_by_commit.clear();
  stored.detected_at = stored.updated_at = now_();
  stored.events.clear();
  // Returned as the database's RETURNING gives it: without its events.
  Regression kept = stored;
  kept.events.push_back({std::nullopt, RegressionState::kNew, "perfgate-coordinator",
                         absl::StrCat("detected after run ", d.detected_after_run_id, " of ", r.branch, " closed"),
                         "", stored.detected_at});
  rows_.push_back(std::move(kept));
  Notify(notify, stored);
  return std::optional<Regression>(std::move(stored));
}

absl::StatusOr<std::vector<Regression>> InMemoryRegressionRepository::FindRegressions(const RegressionFilter& f) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Regression> out;
  for (const Regression& r : rows_) {
    if (Matches(r, f)) out.push_back(r);
  }
  std::sort(out.begin(), out.end(), [](const Regression& a, const Regression& b) {
    return a.detected_at != b.detected_at ? a.detected_at > b.detected_at : a.id > b.id;
  });
  const size_t limit = ClampRows(kRegressionRows, f.limit);
  if (out.size() > limit) out.resize(limit);
  return out;
}

absl::StatusOr<Regression> InMemoryRegressionRepository::GetRegression(int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  const Regression* r = Find(id);
  if (r == nullptr) return absl::NotFoundError(absl::StrCat("regression ", id, " does not exist"));
  return *r;
}

absl::StatusOr<Regression> InMemoryRegressionRepository::ApplyTriage(const TriageChange& change,
                                                                   const NotifyWith<Regression>& notify) {
  std::lock_guard<std::mutex> lock(mu_);
  Regression* r = Find(change.id);
  if (r == nullptr) return absl::NotFoundError(absl::StrCat("regression ", change.id, " does not exist"));
  if (r->state == change.state) {
    const std::string state(ToString(r->state));
    return absl::FailedPreconditionError(absl::StrCat("regression ", change.id, " is already ", state));
  }
  const RegressionState from = r->state;
  r->state = change.state;
  r->updated_at = now_();
  r->fixed_by_commit = change.commit;
  r->events.push_back({from, change.state, change.actor, change.note, change.commit, r->updated_at});
  Notify(notify, *r);
  return *r;
}

std::vector<NotificationEvent> InMemoryRegressionRepository::Notifications() const {
  std::lock_guard<std::mutex> lock(mu_);
  return notifications_;
}

}  // namespace perfgate::coordinator::store
