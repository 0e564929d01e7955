#include "coordinator/regressions.h"

#include <algorithm>
#include <cmath>
#include <pqxx/pqxx>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "coordinator/history.h"
#include "coordinator/series.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator {
namespace {

constexpr uint32_t kMaxRegressionList = 1000;
constexpr size_t kMaxNote = 4000;
constexpr size_t kMaxActor = 200;
// Points of a series that detection looks at: the newest this many valid runs.
constexpr uint32_t kDetectionWindow = 200;

constexpr const char* kColumns =
    "id, benchmark, metric, sku, branch, unit, direction, good_commit, bad_commit, "
    "first_bad_run_id::text, median_before, median_after, change, p_value, state, "
    "fixed_by_commit, (extract(epoch from detected_at) * 1000000)::bigint, "
    "(extract(epoch from updated_at) * 1000000)::bigint";

TimePoint FromMicros(int64_t us) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(us)));
}

Regression RowToRegression(const pqxx::row& row) {
  Regression r;
  r.id = row[0].as<int64_t>();
  r.benchmark = row[1].as<std::string>();
  r.metric = row[2].as<std::string>();
  r.sku = row[3].as<std::string>();
  r.branch = row[4].as<std::string>();
  r.unit = row[5].as<std::string>();
  ParseDirection(row[6].as<std::string>(), &r.direction);
  r.good_commit = row[7].as<std::string>();
  r.bad_commit = row[8].as<std::string>();
  r.first_bad_run_id = row[9].as<std::string>();
  r.median_before = row[10].as<double>();
  r.median_after = row[11].as<double>();
  r.change = row[12].as<double>();
  r.p_value = row[13].as<double>();
  r.state = row[14].as<std::string>();
  r.fixed_by_commit = row[15].as<std::string>();
  r.detected_at = FromMicros(row[16].as<int64_t>());
  r.updated_at = FromMicros(row[17].as<int64_t>());
  return r;
}

bool KnownState(const std::string& s) {
  return std::find_if(std::begin(kRegressionStates), std::end(kRegressionStates),
                      [&](const char* k) { return s == k; }) != std::end(kRegressionStates);
}

void ReadEvents(pqxx::transaction_base& txn, Regression& r) {
  for (const auto& row : txn.exec_params(
           "SELECT from_state, to_state, actor, note, commit, "
           "(extract(epoch from at) * 1000000)::bigint FROM regression_events "
           "WHERE regression_id = $1 ORDER BY id",
           r.id)) {
    RegressionEvent e;
    e.from_state = row[0].as<std::string>();
    e.to_state = row[1].as<std::string>();
    e.actor = row[2].as<std::string>();
    e.note = row[3].as<std::string>();
    e.commit = row[4].as<std::string>();
    e.at = FromMicros(row[5].as<int64_t>());
    r.events.push_back(std::move(e));
  }
}

absl::Status CheckTriage(const TriageChange& c) {
  if (c.id <= 0) return absl::InvalidArgumentError(absl::StrCat("id: ", c.id, " is not a regression id"));
  if (c.state == "new" || !KnownState(c.state)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "state: '", c.state, "' is not one of acknowledged, investigating, fixed, accepted, invalid"));
  }
  if (c.note.empty()) return absl::InvalidArgumentError("note: say why the state changes");
  if (c.note.size() > kMaxNote) {
    return absl::InvalidArgumentError(absl::StrCat("note: longer than ", kMaxNote, " bytes"));
  }
  if (c.actor.empty()) return absl::InvalidArgumentError("by: who makes the change must be named");
  if (c.actor.size() > kMaxActor) {
    return absl::InvalidArgumentError(absl::StrCat("by: longer than ", kMaxActor, " bytes"));
  }
  if (c.state == "fixed" && c.commit.empty()) {
    return absl::InvalidArgumentError("commit: a regression is fixed by a commit; name it");
  }
  if (c.state != "fixed" && !c.commit.empty()) {
    return absl::InvalidArgumentError("commit: only a change to 'fixed' names a commit");
  }
  return absl::OkStatus();
}

// A change that detection would store: in the series' valid points, the
// first bad point and the size.
struct Candidate {
  HistoryChange change;
  std::string good_commit, bad_commit, first_bad_run_id;
  std::vector<std::string> nearby_runs;  // runs within kSameChangeRuns of the first bad one
};

std::vector<Candidate> Candidates(const Series& series, const gate::ResolvedRule& rule) {
  const ValidHistory valid = ValidPoints(series);
  const std::vector<HistoryPoint>& pts = valid.history.points;
  std::vector<Candidate> out;
  for (const HistoryChange& c : FindHistoryChanges(valid.history)) {
    if (!(c.change > rule.tolerance)) continue;
    if (rule.floor && std::abs(c.median_after - c.median_before) < *rule.floor) continue;
    Candidate cand;
    cand.change = c;
    cand.bad_commit = pts[c.index].commit;
    cand.first_bad_run_id = pts[c.index].run_id;
    cand.good_commit = c.index > 0 ? pts[c.index - 1].commit : "";
    const size_t lo = c.index >= kSameChangeRuns ? c.index - kSameChangeRuns : 0;
    const size_t hi = std::min(pts.size() - 1, c.index + kSameChangeRuns);
    for (size_t i = lo; i <= hi; ++i) cand.nearby_runs.push_back(pts[i].run_id);
    out.push_back(std::move(cand));
  }
  return out;
}

// Stores one candidate unless the series already holds it; returns the stored one.
absl::StatusOr<std::optional<Regression>> StoreCandidate(Store& store, const RunRecord& run,
                                                         const MetricSummary& m, const Series& series,
                                                         const Candidate& c) {
  std::optional<Regression> stored;
  absl::Status s = store.WithConnection("storing a regression", [&](pqxx::connection_base& conn) {
    pqxx::work txn(conn);
    const std::string key = absl::StrCat(m.benchmark, "\n", m.metric, "\n", run.meta.environment.sku,
                                         "\n", run.meta.branch);
    // Coordinators sharing the database check one series at a time.
    txn.exec_params("SELECT pg_advisory_xact_lock(hashtext($1))", key);
    const pqxx::result seen = txn.exec_params(
        "SELECT id, first_bad_run_id::text, state FROM regressions WHERE benchmark = $1 AND metric = $2 "
        "AND sku = $3 AND branch = $4 "
        "AND first_bad_run_id::text IN (SELECT jsonb_array_elements_text($5::jsonb)) ORDER BY id",
        m.benchmark, m.metric, run.meta.environment.sku, run.meta.branch,
        nlohmann::json(c.nearby_runs).dump());
    if (!seen.empty()) {
      // The same change seen again, with more runs on its new level: while
      // nobody has looked at it, its position and size follow the estimate.
      for (const auto& row : seen) {
        if (row[1].as<std::string>() == c.first_bad_run_id) return absl::OkStatus();
      }
      if (seen.size() == 1 && seen[0][2].as<std::string>() == "new") {
        txn.exec_params(
            "UPDATE regressions SET good_commit = $2, bad_commit = $3, first_bad_run_id = $4::uuid, "
            "median_before = $5, median_after = $6, change = $7, p_value = $8, updated_at = now() "
            "WHERE id = $1",
            seen[0][0].as<int64_t>(), c.good_commit, c.bad_commit, c.first_bad_run_id,
            c.change.median_before, c.change.median_after, c.change.change, c.change.p_value);
        txn.commit();
      }
      return absl::OkStatus();
    }
    const pqxx::result row = txn.exec_params(
        absl::StrCat("INSERT INTO regressions (benchmark, metric, sku, branch, unit, direction, "
                     "good_commit, bad_commit, first_bad_run_id, median_before, median_after, change, "
                     "p_value) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::uuid, $10, $11, $12, $13) "
                     "ON CONFLICT DO NOTHING RETURNING ",
                     kColumns),
        m.benchmark, m.metric, run.meta.environment.sku, run.meta.branch, series.unit,
        std::string(ToString(series.direction)), c.good_commit, c.bad_commit, c.first_bad_run_id,
        c.change.median_before, c.change.median_after, c.change.change, c.change.p_value);
    if (row.empty()) return absl::OkStatus();
    stored = RowToRegression(row[0]);
    txn.exec_params(
        "INSERT INTO regression_events (regression_id, from_state, to_state, actor, note) "
        "VALUES ($1, '', 'new', 'perfgate-coordinator', $2)",
        stored->id,
        absl::StrCat("detected after run ", run.meta.run_id, " of ", run.meta.branch, " closed"));
    txn.commit();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return stored;
}

}  // namespace

absl::StatusOr<std::vector<Regression>> ListRegressions(Store& store, const RegressionFilter& f) {
  if (!f.state.empty() && !KnownState(f.state)) {
    return absl::InvalidArgumentError(absl::StrCat("state: '", f.state, "' is not one of ",
                                                   absl::StrJoin(kRegressionStates, ", ")));
  }
  if (f.limit > kMaxRegressionList) {
    return absl::InvalidArgumentError(absl::StrCat("limit: at most ", kMaxRegressionList));
  }
  std::vector<Regression> out;
  absl::Status s = store.WithConnection("listing regressions", [&](pqxx::connection_base& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec_params(
             absl::StrCat("SELECT ", kColumns,
                          " FROM regressions WHERE ($1 = '' OR state = $1) AND ($2 = '' OR branch = $2) "
                          "AND ($3 = '' OR sku = $3) AND ($4 = '' OR benchmark = $4) "
                          "ORDER BY detected_at DESC, id DESC LIMIT $5"),
             f.state, f.branch, f.sku, f.benchmark, static_cast<int64_t>(f.limit == 0 ? 100 : f.limit))) {
      out.push_back(RowToRegression(row));
    }
    for (Regression& r : out) ReadEvents(txn, r);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<Regression> GetRegression(Store& store, int64_t id) {
  Regression r;
  absl::Status s = store.WithConnection("reading a regression", [&](pqxx::connection_base& c) {
    pqxx::read_transaction txn(c);
    pqxx::result row =
        txn.exec_params(absl::StrCat("SELECT ", kColumns, " FROM regressions WHERE id = $1"), id);
    if (row.empty()) return absl::NotFoundError(absl::StrCat("regression ", id, " does not exist"));
    r = RowToRegression(row[0]);
    ReadEvents(txn, r);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return r;
}

absl::StatusOr<Regression> Triage(Store& store, const TriageChange& change) {
  if (auto s = CheckTriage(change); !s.ok()) return s;
  Regression r;
  absl::Status s = store.WithConnection("triaging a regression", [&](pqxx::connection_base& c) {
    pqxx::work txn(c);
    pqxx::result cur =
        txn.exec_params("SELECT state FROM regressions WHERE id = $1 FOR UPDATE", change.id);
    if (cur.empty()) return absl::NotFoundError(absl::StrCat("regression ", change.id, " does not exist"));
    const std::string from = cur[0][0].as<std::string>();
    if (from == change.state) {
      return absl::FailedPreconditionError(
          absl::StrCat("regression ", change.id, " is already ", from));
    }
    pqxx::result row = txn.exec_params(
        absl::StrCat("UPDATE regressions SET state = $2, updated_at = now(), fixed_by_commit = $3 "
                     "WHERE id = $1 RETURNING ",
                     kColumns),
        change.id, change.state, change.commit);
    txn.exec_params(
        "INSERT INTO regression_events (regression_id, from_state, to_state, actor, note, commit) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        change.id, from, change.state, change.actor, change.note, change.commit);
    r = RowToRegression(row[0]);
    ReadEvents(txn, r);
    txn.commit();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return r;
}

absl::StatusOr<std::vector<Regression>> DetectRegressions(Store& store, const std::string& run_id,
                                                          const gate::Policy& policy) {
  std::vector<Regression> found;
  auto run = store.GetRun(run_id);
  if (!run.ok()) return run.status();
  if (run->status != RunStatus::kComplete || !run->invalid_reasons.empty()) return found;
  auto sums = store.GetSummaries(run_id);
  if (!sums.ok()) return sums.status();
  for (const MetricSummary& m : *sums) {
    if (m.n == 0) continue;
    SeriesQuery q{m.benchmark, m.metric, run->meta.environment.sku, run->meta.branch, "",
                  kDetectionWindow};
    auto series = GetSeries(store, q);
    if (!series.ok()) return series.status();
    const gate::ResolvedRule rule = policy.Resolve(q.sku, m.benchmark, m.metric);
    for (const Candidate& c : Candidates(*series, rule)) {
      auto stored = StoreCandidate(store, *run, m, *series, c);
      if (!stored.ok()) return stored.status();
      if (*stored) found.push_back(**stored);
    }
  }
  return found;
}

}  // namespace perfgate::coordinator
