// The bisections repository (bisections.h): jobs, probes and outcomes of
// `perfgate bisect`, each write one transaction.
#include "coordinator/store/bisections.h"

#include "absl/strings/str_cat.h"
#include "common/row_limits.h"
#include "common/status_macros.h"
#include "coordinator/store/database.h"
#include "coordinator/store/outbox.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {
namespace {

// The columns RowToBisection reads, in its order.
const std::string& BisectionColumns() {
  static const std::string columns = absl::StrCat(
      "id, COALESCE(regression_id, 0), good_commit, bad_commit, benchmark, metric, commits::text, "
      "settings::text, state, regression_size, culprit, change, change_ci_low, change_ci_high, range_good, "
      "range_bad, summary, created_by, ",
      MicrosFromTimestamp("created_at"), ", ", MicrosFromTimestamp("updated_at"));
  return columns;
}

Bisection RowToBisection(const pqxx::row& row) {
  Bisection b;
  b.id = row[0].as<int64_t>();
  b.regression_id = row[1].as<int64_t>();
  b.good_commit = row[2].as<std::string>();
  b.bad_commit = row[3].as<std::string>();
  b.benchmark = row[4].as<std::string>();
  b.metric = row[5].as<std::string>();
  b.commits_json = row[6].as<std::string>();
  b.settings_json = row[7].as<std::string>();
  // The column's CHECK admits only the names of kBisectionStateNames.
  b.state = ParseBisectionState(row[8].as<std::string>()).value_or(BisectionState::kRunning);
  BisectionOutcome& o = b.outcome;
  o.state = b.state;
  o.regression_size = NullableDouble(row[9]);
  o.culprit = row[10].as<std::string>();
  o.change = NullableDouble(row[11]);
  o.ci_low = NullableDouble(row[12]);
  o.ci_high = NullableDouble(row[13]);
  o.range_good = row[14].as<std::string>();
  o.range_bad = row[15].as<std::string>();
  o.summary = row[16].as<std::string>();
  b.created_by = row[17].as<std::string>();
  b.created_at = FromMicros(row[18].as<int64_t>());
  b.updated_at = FromMicros(row[19].as<int64_t>());
  return b;
}

void ReadProbes(pqxx::transaction_base& txn, Bisection& b) {
  for (const auto& row : txn.exec_params(
           absl::StrCat("SELECT commit, attempt, verdict, change, change_ci_low, change_ci_high, p_value, threshold, "
                        "rounds, note, ",
                        MicrosFromTimestamp("at"), " FROM bisection_probes WHERE bisection_id = $1 ORDER BY id"),
           b.id)) {
    BisectionProbe p;
    p.commit = row[0].as<std::string>();
    p.attempt = row[1].as<int>();
    // The column's CHECK admits the four names only.
    p.verdict = ParseProbeVerdict(row[2].as<std::string>()).value_or(ProbeVerdict::kFailed);
    p.change = NullableDouble(row[3]);
    p.ci_low = NullableDouble(row[4]);
    p.ci_high = NullableDouble(row[5]);
    p.p_value = NullableDouble(row[6]);
    p.threshold = row[7].as<double>();
    p.rounds = row[8].as<int>();
    p.note = row[9].as<std::string>();
    p.at = FromMicros(row[10].as<int64_t>());
    p.benchmark = b.benchmark;
    p.metric = b.metric;
    b.probes.push_back(std::move(p));
  }
}

// The running bisection `id`, locked for the rest of the transaction.
absl::Status LockRunning(pqxx::work& txn, int64_t id) {
  const pqxx::result cur = txn.exec_params("SELECT state FROM bisections WHERE id = $1 FOR UPDATE", id);
  if (cur.empty()) return absl::NotFoundError(absl::StrCat("bisection ", id, " does not exist"));
  const std::string state = cur[0][0].as<std::string>();
  if (state != ToString(BisectionState::kRunning)) {
    return absl::FailedPreconditionError(absl::StrCat("bisection ", id, " has ended (", state, ")"));
  }
  return absl::OkStatus();
}

// NaN as NULL: the parameter `n` as a float8 that may be NULL.
std::string Nullable(int n) { return absl::StrCat("NULLIF($", n, "::float8, 'NaN')"); }

}  // namespace

absl::StatusOr<Bisection> BisectionRepository::CreateBisection(const Bisection& b) {
  Bisection out;
  absl::Status s = db_.Run("storing a bisection", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    if (b.regression_id != 0 &&
        txn.exec_params("SELECT 1 FROM regressions WHERE id = $1", b.regression_id).empty()) {
      return absl::NotFoundError(absl::StrCat("regression ", b.regression_id, " does not exist"));
    }
    const pqxx::result row = txn.exec_params(
        absl::StrCat("INSERT INTO bisections (regression_id, good_commit, bad_commit, benchmark, metric, "
                     "commits, settings, created_by) VALUES (NULLIF($1, 0), $2, $3, $4, $5, $6::jsonb, "
                     "$7::jsonb, $8) RETURNING ",
                     BisectionColumns()),
        b.regression_id, b.good_commit, b.bad_commit, b.benchmark, b.metric, b.commits_json,
        b.settings_json, b.created_by);
    out = RowToBisection(row[0]);
    txn.commit();
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return out;
}

absl::StatusOr<Bisection> BisectionRepository::GetBisection(int64_t id) {
  Bisection b;
  absl::Status s = db_.Run("reading a bisection", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    const pqxx::result row =
        txn.exec_params(absl::StrCat("SELECT ", BisectionColumns(), " FROM bisections WHERE id = $1"), id);
    if (row.empty()) return absl::NotFoundError(absl::StrCat("bisection ", id, " does not exist"));
    b = RowToBisection(row[0]);
    ReadProbes(txn, b);
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return b;
}

absl::StatusOr<std::vector<Bisection>> BisectionRepository::ListBisections(int64_t regression_id,
                                                                           uint32_t limit) {
  std::vector<Bisection> out;
  absl::Status s = db_.Run("listing bisections", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec_params(
             absl::StrCat("SELECT ", BisectionColumns(),
                          " FROM bisections WHERE ($1 = 0 OR regression_id = $1) ORDER BY id DESC LIMIT $2"),
             regression_id, static_cast<int64_t>(ClampRows(kBisectionRows, limit)))) {
      out.push_back(RowToBisection(row));
    }
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return out;
}

absl::StatusOr<Bisection> BisectionRepository::AddBisectionProbe(int64_t id, const BisectionProbe& p) {
  absl::Status s = db_.Run("storing a probe", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    PERFGATE_RETURN_IF_ERROR(LockRunning(txn, id));
    if (!txn.exec_params("SELECT 1 FROM bisection_probes WHERE bisection_id = $1 AND commit = $2 AND attempt = $3",
                         id, p.commit, p.attempt)
             .empty()) {
      return absl::AlreadyExistsError(
          absl::StrCat("bisection ", id, " already has attempt ", p.attempt, " of ", p.commit));
    }
    txn.exec_params(
        absl::StrCat("INSERT INTO bisection_probes (bisection_id, commit, attempt, verdict, change, "
                     "change_ci_low, change_ci_high, p_value, threshold, rounds, note) VALUES ($1, $2, $3, $4, ",
                     Nullable(5), ", ", Nullable(6), ", ", Nullable(7), ", ", Nullable(8), ", $9, $10, $11)"),
        id, p.commit, p.attempt, std::string(ToString(p.verdict)), p.change, p.ci_low, p.ci_high, p.p_value,
        p.threshold, p.rounds, p.note);
    txn.exec_params(
        "UPDATE bisections SET benchmark = CASE WHEN benchmark = '' THEN $2 ELSE benchmark END, "
        "metric = CASE WHEN metric = '' THEN $3 ELSE metric END, updated_at = now() WHERE id = $1",
        id, p.benchmark, p.metric);
    txn.commit();
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return GetBisection(id);
}

absl::StatusOr<Bisection> BisectionRepository::FinishBisection(int64_t id, const BisectionOutcome& o,
                                                               const std::string& actor,
                                                               const NotifyWith<FinishedBisection>& notify) {
  absl::Status s = db_.Run("ending a bisection", [&](pqxx::connection& c) {
    pqxx::work txn(c);
    PERFGATE_RETURN_IF_ERROR(LockRunning(txn, id));
    const pqxx::result row = txn.exec_params(
        absl::StrCat("UPDATE bisections SET state = $2, regression_size = ", Nullable(3), ", culprit = $4, change = ",
                     Nullable(5), ", change_ci_low = ", Nullable(6), ", change_ci_high = ", Nullable(7),
                     ", range_good = $8, range_bad = $9, summary = $10, updated_at = now() WHERE id = $1 "
                     "RETURNING COALESCE(regression_id, 0)"),
        id, std::string(ToString(o.state)), o.regression_size, o.culprit, o.change, o.ci_low, o.ci_high,
        o.range_good, o.range_bad, o.summary);
    const int64_t regression = row[0][0].as<int64_t>();
    if (regression != 0 && !o.triage_note.empty()) {
      // A line of the triage record that leaves the regression's state as it is.
      txn.exec_params(
          "INSERT INTO regression_events (regression_id, from_state, to_state, actor, note, commit) "
          "SELECT id, state, state, $2, $3, $4 FROM regressions WHERE id = $1",
          regression, actor, o.triage_note, o.culprit);
      txn.exec_params("UPDATE regressions SET updated_at = now() WHERE id = $1", regression);
    }
    std::string branch, sku;
    if (regression != 0) {
      const pqxx::result r = txn.exec_params("SELECT branch, sku FROM regressions WHERE id = $1", regression);
      if (!r.empty()) {
        branch = r[0][0].as<std::string>();
        sku = r[0][1].as<std::string>();
      }
    }
    NotifyInTransaction(txn, notify, FinishedBisection{id, o, regression, branch, sku});
    txn.commit();
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return GetBisection(id);
}

}  // namespace perfgate::coordinator::store
