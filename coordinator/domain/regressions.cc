#include "coordinator/domain/regressions.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/row_limits.h"
#include "common/status_macros.h"
#include "coordinator/domain/notification_events.h"
#include "coordinator/domain/series.h"
#include "gate/regression_detection.h"

namespace perfgate::coordinator {
namespace {

constexpr size_t kMaxNote = 4000;
constexpr size_t kMaxActor = 200;
// Points of a series that detection looks at: the newest this many valid runs.
constexpr uint32_t kDetectionWindow = 200;

absl::Status CheckTriage(const TriageChange& c) {
  if (c.id <= 0) return absl::InvalidArgumentError(absl::StrCat("id: ", c.id, " is not a regression id"));
  if (c.state == RegressionState::kNew) {
    return absl::InvalidArgumentError(
        "state: a regression is new only when detected; triage moves it to acknowledged, investigating, fixed, "
        "accepted or invalid");
  }
  if (c.note.empty()) return absl::InvalidArgumentError("note: say why the state changes");
  if (c.note.size() > kMaxNote) {
    return absl::InvalidArgumentError(absl::StrCat("note: longer than ", kMaxNote, " bytes"));
  }
  if (c.actor.empty()) return absl::InvalidArgumentError("by: who makes the change must be named");
  if (c.actor.size() > kMaxActor) {
    return absl::InvalidArgumentError(absl::StrCat("by: longer than ", kMaxActor, " bytes"));
  }
  if (c.state == RegressionState::kFixed && c.commit.empty()) {
    return absl::InvalidArgumentError("commit: a regression is fixed by a commit; name it");
  }
  if (c.state != RegressionState::kFixed && !c.commit.empty()) {
    return absl::InvalidArgumentError("commit: only a change to 'fixed' names a commit");
  }
  return absl::OkStatus();
}

// What SaveDetectedRegression stores of a candidate of run `run`'s metric `m`.
store::DetectedRegression ToStore(const RunRecord& run, const MetricSummary& m, const Series& series,
                                  const gate::DetectedChange& c) {
  store::DetectedRegression d;
  Regression& r = d.regression;
  r.benchmark = m.benchmark;
  r.metric = m.metric;
  r.sku = run.meta.environment.sku;
  r.branch = run.meta.branch;
  r.unit = series.unit;
  r.direction = series.direction;
  r.good_commit = c.good_commit;
  r.bad_commit = c.bad_commit;
  r.first_bad_run_id = c.first_bad_run_id;
  r.median_before = c.change.median_before;
  r.median_after = c.change.median_after;
  r.change = c.change.change;
  r.p_value = c.change.p_value;
  d.nearby_runs = c.nearby_runs;
  d.detected_after_run_id = run.meta.run_id;
  return d;
}

}  // namespace

absl::StatusOr<std::vector<Regression>> ListRegressions(store::RegressionRepository& store, const RegressionFilter& f) {
  PERFGATE_RETURN_IF_ERROR(RowsFor(kRegressionRows, f.limit).status());
  return store.FindRegressions(f);
}

absl::StatusOr<RegressionState> RegressionStateOf(const std::string& field, const std::string& name) {
  if (auto state = ParseRegressionState(name)) return *state;
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": '", name, "' is not one of ", absl::StrJoin(kRegressionStateNames, ", ", [](std::string* out, std::string_view n) { out->append(n); })));
}

absl::StatusOr<Regression> Triage(store::RegressionRepository& store, const TriageChange& change) {
  PERFGATE_RETURN_IF_ERROR(CheckTriage(change));
  return store.ApplyTriage(change, RegressionTriaged);
}

absl::StatusOr<std::vector<Regression>> DetectRegressions(const DetectionStores& stores, const std::string& run_id,
                                                          const gate::Policy& policy) {
  std::vector<Regression> found;
  auto run = stores.runs.GetRun(run_id);
  PERFGATE_RETURN_IF_ERROR(run);
  if (run->status != RunStatus::kComplete || !run->invalid_reasons.empty()) return found;
  auto sums = stores.runs.GetGateSummaries(run_id);
  PERFGATE_RETURN_IF_ERROR(sums);
  for (const store::StoredSummary& stored : *sums) {
    const MetricSummary& m = stored.summary;
    if (m.n == 0) continue;
    SeriesQuery q{m.benchmark, m.metric, run->meta.environment.sku, run->meta.branch, "",
                  kDetectionWindow};
    auto series = stores.series.GetSeries(q);
    PERFGATE_RETURN_IF_ERROR(series);
    const gate::ResolvedRule rule = policy.Resolve(q.sku, m.benchmark, m.metric);
    for (const gate::DetectedChange& c : gate::FindRegressions(ValidPoints(*series).history, rule)) {
      auto saved = stores.regressions.SaveDetectedRegression(ToStore(*run, m, *series, c), RegressionFound);
      PERFGATE_RETURN_IF_ERROR(saved);
      if (*saved) found.push_back(**saved);
    }
  }
  return found;
}

}  // namespace perfgate::coordinator
