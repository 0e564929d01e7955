#include "coordinator/store/regressions.h"

#include <chrono>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/regression_state.h"
#include "common/status_macros.h"
#include "coordinator/store/database.h"
#include "coordinator/store/outbox.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {
namespace {

// The columns RowToRegression reads, in its order.
const std::string& RegressionColumns() {
  static const std::string columns = absl::StrCat(
      "id, benchmark, metric, sku, branch, unit, direction, good_commit, bad_commit, "
      "first_bad_run_id::text, median_before, median_after, change, p_value, state, fixed_by_commit, ",
      MicrosFromTimestamp("detected_at"), ", ", MicrosFromTimestamp("updated_at"));
  return columns;
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
  // The column's CHECK admits only the names.
  r.state = ParseRegressionState(row[14].as<std::string>()).value_or(RegressionState::kNew);
  r.fixed_by_commit = row[15].as<std::string>();
  r.detected_at = FromMicros(row[16].as<int64_t>());
  r.updated_at = FromMicros(row[17].as<int64_t>());
  return r;
}

void ReadEvents(pqxx::transaction_base& txn, Regression& r) {
  for (const auto& row : txn.exec_params(absl::StrCat("SELECT from_state, to_state, actor, note, commit, ",
                                                      MicrosFromTimestamp("at"),
                                                      " FROM regression_events WHERE regression_id = $1 ORDER BY id"),
                                         r.id)) {
    RegressionEvent e;
    e.from_state = ParseRegressionState(row[0].as<std::string>());  // '' for the detection
    e.to_state = ParseRegressionState(row[1].as<std::string>()).value_or(RegressionState::kNew);
    e.actor = row[2].as<std::string>();
    e.note = row[3].as<std::string>();
    e.commit = row[4].as<std::string>();
    e.at = FromMicros(row[5].as<int64_t>());
    r.events.push_back(std::move(e));
  }
}

}  // namespace

absl::StatusOr<std::optional<Regression>> PgRegressionRepository::SaveDetectedRegression(
    const DetectedRegression& d, const NotifyWith<Regression>& notify) {
  const Regression& r = d.regression;
  std::optional<Regression> stored;
  absl::Status s = db_.Run("storing a regression", [&](pqxx::connection& conn) {
    pqxx::work txn(conn);
    const std::string key = absl::StrCat(r.benchmark, "\n", r.metric, "\n", r.sku, "\n", r.branch);
    // Coordinators sharing the database check one series at a time.
    txn.exec_params("SELECT pg_advisory_xact_lock(hashtext($1))", key);
    const pqxx::result seen = txn.exec_params(
        "SELECT id, first_bad_run_id::text, state FROM regressions WHERE benchmark = $1 AND metric = $2 "
        "AND sku = $3 AND branch = $4 "
        "AND first_bad_run_id::text IN (SELECT jsonb_array_elements_text($5::jsonb)) ORDER BY id",
        r.benchmark, r.metric, r.sku, r.branch,
        Json(d.nearby_runs).dump());
    if (!seen.empty()) {
      // The same change seen again, with more runs on its new level: while
      // nobody has looked at it, its position and size follow the estimate.
      for (const auto& row : seen) {
        if (row[1].as<std::string>() == r.first_bad_run_id) return absl::OkStatus();
      }
      if (seen.size() == 1 && ParseRegressionState(seen[0][2].as<std::string>()) == RegressionState::kNew) {
        txn.exec_params(
            "UPDATE regressions SET good_commit = $2, bad_commit = $3, first_bad_run_id = $4::uuid, "
            "median_before = $5, median_after = $6, change = $7, p_value = $8, updated_at = now() "
            "WHERE id = $1",
            seen[0][0].as<int64_t>(), r.good_commit, r.bad_commit, r.first_bad_run_id,
            r.median_before, r.median_after, r.change, r.p_value);
        txn.commit();
      }
      return absl::OkStatus();
    }
    const pqxx::result row = txn.exec_params(
        absl::StrCat("INSERT INTO regressions (benchmark, metric, sku, branch, unit, direction, "
                     "good_commit, bad_commit, first_bad_run_id, median_before, median_after, change, "
                     "p_value) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::uuid, $10, $11, $12, $13) "
                     "ON CONFLICT DO NOTHING RETURNING ",
                     RegressionColumns()),
        r.benchmark, r.metric, r.sku, r.branch, r.unit,
        std::string(ToString(r.direction)), r.good_commit, r.bad_commit, r.first_bad_run_id,
        r.median_before, r.median_after, r.change, r.p_value);
    if (row.empty()) return absl::OkStatus();
    stored = RowToRegression(row[0]);
    txn.exec_params(
        "INSERT INTO regression_events (regression_id, from_state, to_state, actor, note) "
        "VALUES ($1, '', 'new', 'perfgate-coordinator', $2)",
        stored->id,
        absl::StrCat("detected after run ", d.detected_after_run_id, " of ", r.branch, " closed"));
    NotifyInTransaction(txn, notify, *stored);
    txn.commit();
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return stored;
}


absl::StatusOr<std::vector<Regression>> PgRegressionRepository::FindRegressions(const RegressionFilter& f) {
  std::vector<Regression> out;
  absl::Status s = db_.Run("listing regressions", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec_params(
             absl::StrCat("SELECT ", RegressionColumns(),
                          " FROM regressions WHERE ($1 = '' OR state = $1) AND ($2 = '' OR branch = $2) "
                          "AND ($3 = '' OR sku = $3) AND ($4 = '' OR benchmark = $4) "
                          "ORDER BY detected_at DESC, id DESC LIMIT $5"),
             f.state ? std::string(ToString(*f.state)) : std::string(), f.branch, f.sku, f.benchmark, static_cast<int64_t>(ClampRows(kRegressionRows, f.limit)))) {
      out.push_back(RowToRegression(row));
    }
    for (Regression& r : out) ReadEvents(txn, r);
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return out;
}

absl::StatusOr<Regression> PgRegressionRepository::GetRegression(int64_t id) {
  Regression r;
  absl::Status s = db_.Run("reading a regression", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    pqxx::result row =
        txn.exec_params(absl::StrCat("SELECT ", RegressionColumns(), " FROM regressions WHERE id = $1"), id);
    if (row.empty()) return absl::NotFoundError(absl::StrCat("regression ", id, " does not exist"));
    r = RowToRegression(row[0]);
    ReadEvents(txn, r);
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return r;
}

absl::StatusOr<Regression> PgRegressionRepository::ApplyTriage(const TriageChange& change,
                                                               const NotifyWith<Regression>& notify) {
  Regression r;
  absl::Status s = db_.Run("triaging a regression", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    pqxx::result cur =
        txn.exec_params("SELECT state FROM regressions WHERE id = $1 FOR UPDATE", change.id);
    if (cur.empty()) return absl::NotFoundError(absl::StrCat("regression ", change.id, " does not exist"));
    const std::string from = cur[0][0].as<std::string>();
    const std::string to(ToString(change.state));
    if (from == to) return absl::FailedPreconditionError(absl::StrCat("regression ", change.id, " is already ", from));
    pqxx::result row = txn.exec_params(
        absl::StrCat("UPDATE regressions SET state = $2, updated_at = now(), fixed_by_commit = $3 "
                     "WHERE id = $1 RETURNING ",
                     RegressionColumns()),
        change.id, to, change.commit);
    txn.exec_params(
        "INSERT INTO regression_events (regression_id, from_state, to_state, actor, note, commit) "
        "VALUES ($1, $2, $3, $4, $5, $6)",
        change.id, from, to, change.actor, change.note, change.commit);
    r = RowToRegression(row[0]);
    ReadEvents(txn, r);
    NotifyInTransaction(txn, notify, r);
    txn.commit();
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return r;
}

}  // namespace perfgate::coordinator::store
