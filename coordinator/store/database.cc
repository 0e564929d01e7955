#include "coordinator/store/database.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/match.h"
#include "common/status_macros.h"

namespace perfgate::coordinator::store {
namespace {

// How long a call waits for a pooled connection before giving up.
constexpr auto kAcquireTimeout = std::chrono::seconds(30);

// The statements every batch runs, prepared once per connection (libpqxx
// sends the PREPARE on first use): parsed and planned once instead of once
// a batch.
void PrepareBatchStatements(pqxx::connection& c) {
  c.prepare("run_for_share", "SELECT status FROM runs WHERE id = $1 FOR SHARE");
  c.prepare("batch_insert",
            "INSERT INTO batches (run_id, sequence, sample_count, digest, ranges, summarized) "
            "VALUES ($1, $2, $3, '', $4::jsonb, true) "
            "ON CONFLICT (run_id, sequence) DO NOTHING RETURNING 1");
  c.prepare("benchmark_ids",
            "SELECT key, id FROM benchmarks WHERE key IN (SELECT jsonb_array_elements_text($1::jsonb))");
  c.prepare("benchmark_insert",
            "INSERT INTO benchmarks (key, suite, name, params) "
            "SELECT x->>'key', x->>'suite', x->>'name', x->'params' FROM jsonb_array_elements($1::jsonb) x "
            "ON CONFLICT (key) DO NOTHING");
  c.prepare("metric_ids",
            "SELECT m.benchmark_id, m.name, m.id, m.unit, m.direction FROM metrics m "
            "JOIN jsonb_array_elements($1::jsonb) x ON m.benchmark_id = (x->>'b')::bigint "
            "AND m.name = x->>'name' AND m.unit = x->>'unit' AND m.direction = x->>'direction'");
  c.prepare("metric_insert",
            "INSERT INTO metrics (benchmark_id, name, unit, direction) "
            "SELECT (x->>'b')::bigint, x->>'name', x->>'unit', x->>'direction' "
            "FROM jsonb_array_elements($1::jsonb) x ON CONFLICT (benchmark_id, name, unit, direction) DO NOTHING");
  c.prepare("run_cases_upsert",
            "INSERT INTO run_cases (run_id, benchmark_id, status, reason, noise, bound_metric, bound_kind, "
            "bound_value) "
            "SELECT $1::uuid, (x->>'b')::bigint, x->>'status', x->>'reason', (x->>'noise')::float8, "
            "x->>'bound_metric', x->>'bound_kind', (x->>'bound_value')::float8 "
            "FROM jsonb_array_elements($2::jsonb) x ON CONFLICT (run_id, benchmark_id) DO UPDATE "
            "SET status = excluded.status, reason = excluded.reason, noise = excluded.noise, "
            "bound_metric = excluded.bound_metric, bound_kind = excluded.bound_kind, "
            "bound_value = excluded.bound_value "
            "WHERE excluded.status <> 'unspecified'");
  c.prepare("summary_placeholders",
            "INSERT INTO summaries (run_id, metric_id) "
            "SELECT $1::uuid, m::bigint FROM jsonb_array_elements_text($2::jsonb) m "
            "ON CONFLICT (run_id, metric_id) DO NOTHING");
  // The batch's digest, made while its samples were copied (batch_insert
  // leaves it empty within the transaction).
  c.prepare("batch_digest", "UPDATE batches SET digest = $3 WHERE run_id = $1 AND sequence = $2");
  // The batch's metrics counted, and each one's summary kept while it is
  // the only batch with samples of it (migration 0016).
  c.prepare("batch_summaries",
            "UPDATE summaries s SET sample_batches = s.sample_batches + 1, "
            "batch_summary = CASE WHEN s.sample_batches = 0 THEN x.r END "
            "FROM jsonb_array_elements($2::jsonb) x(r) "
            "WHERE s.run_id = $1::uuid AND s.metric_id = (x.r->>'metric_id')::bigint");
}

// The statements CloseRun runs.
void PrepareCloseStatements(pqxx::connection& c) {
  c.prepare("stored_counts",
            "SELECT (SELECT count(*) FROM run_cases WHERE run_id = $1::uuid), "
            "(SELECT coalesce(sum(sample_count), 0)::bigint FROM batches WHERE run_id = $1::uuid)");
  // What identifies the set of a run's batches: count, samples, last sequence.
  c.prepare("batch_print",
            "SELECT concat_ws(' ', count(*), coalesce(sum(sample_count), 0), coalesce(max(sequence), 0)) "
            "FROM batches WHERE run_id = $1");
  // Per metric of a run with unthrottled samples: their indexes and values,
  // in one order (sorted by the caller: a sort here would spill to disk at
  // the default work_mem).
  c.prepare("run_values",
            "SELECT metric_id, array_agg(idx), array_agg(value) FROM samples "
            "WHERE run_id = $1 AND received_at >= $2::timestamptz AND received_at <= $3::timestamptz "
            "AND NOT throttled GROUP BY metric_id");
  // Whether every batch of the run kept its metrics' summaries (migration
  // 0016); true for a run without batches.
  c.prepare("batches_summarized",
            "SELECT coalesce(bool_and(summarized), true) FROM batches WHERE run_id = $1");
  // The run's metrics, with what StoreBatch kept of each (migration 0016).
  c.prepare("close_metrics",
            "SELECT s.metric_id, b.key, s.sample_batches, s.batch_summary::text FROM summaries s "
            "JOIN metrics m ON m.id = s.metric_id JOIN benchmarks b ON b.id = m.benchmark_id WHERE s.run_id = $1");
  // Per metric of a run among $4: throttled samples counted, the others' values in
  // their binary form (float8send, 8 bytes each) joined into one bytea:
  // cheaper to print and to read back than a float8[] in text.
  c.prepare("close_values",
            "SELECT metric_id, count(*) FILTER (WHERE throttled), "
            "coalesce(string_agg(float8send(value), '') FILTER (WHERE NOT throttled), ''::bytea) FROM samples "
            "WHERE run_id = $1 AND received_at >= $2::timestamptz AND received_at <= $3::timestamptz "
            "AND metric_id = ANY($4::bigint[]) GROUP BY metric_id");
  // The same with the values' sample indexes (int4send), in the values'
  // order, for a run whose processes' medians are computed at close.
  c.prepare("close_values_indexed",
            "SELECT metric_id, count(*) FILTER (WHERE throttled), "
            "coalesce(string_agg(float8send(value), '') FILTER (WHERE NOT throttled), ''::bytea), "
            "coalesce(string_agg(int4send(idx), '') FILTER (WHERE NOT throttled), ''::bytea) FROM samples "
            "WHERE run_id = $1 AND received_at >= $2::timestamptz AND received_at <= $3::timestamptz "
            "GROUP BY metric_id");
  c.prepare("summaries_write",
            "INSERT INTO summaries (run_id, metric_id, n, n_throttled, median, mean, stdev, min, max, "
            "noise, mad, p5, p95, median_ci_low, median_ci_high, process_medians) "
            "SELECT $1::uuid, (x->>'metric_id')::bigint, (x->>'n')::int, (x->>'n_throttled')::int, "
            "(x->>'median')::float8, (x->>'mean')::float8, (x->>'stdev')::float8, "
            "(x->>'min')::float8, (x->>'max')::float8, (x->>'noise')::float8, "
            "(x->>'mad')::float8, (x->>'p5')::float8, (x->>'p95')::float8, "
            "(x->>'median_ci_low')::float8, (x->>'median_ci_high')::float8, "
            "CASE WHEN jsonb_typeof(x->'process_medians') = 'array' THEN ARRAY(SELECT p.v::float8 "
            "FROM jsonb_array_elements_text(x->'process_medians') WITH ORDINALITY p(v, i) ORDER BY p.i) END "
            "FROM jsonb_array_elements($2::jsonb) x "
            "ON CONFLICT (run_id, metric_id) DO UPDATE SET n = excluded.n, "
            "n_throttled = excluded.n_throttled, median = excluded.median, mean = excluded.mean, "
            "stdev = excluded.stdev, min = excluded.min, max = excluded.max, noise = excluded.noise, "
            "mad = excluded.mad, p5 = excluded.p5, p95 = excluded.p95, "
            "median_ci_low = excluded.median_ci_low, median_ci_high = excluded.median_ci_high, "
            "process_medians = excluded.process_medians, batch_summary = NULL");
}


}  // namespace

absl::StatusOr<Database::Lease> Database::Acquire() {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, kAcquireTimeout, [&] { return !idle_.empty() || open_ < size_; })) {
    return absl::UnavailableError(absl::StrCat("all ", size_,
                                               " PostgreSQL connections stayed busy for ",
                                               kAcquireTimeout.count(), " s; retry later"));
  }
  if (!idle_.empty()) {
    auto conn = std::move(idle_.back());
    idle_.pop_back();
    return Lease(this, std::move(conn));
  }
  ++open_;
  lock.unlock();
  try {
    auto conn = std::make_unique<pqxx::connection>(conninfo_);
    // NOTICEs (e.g. "relation already exists, skipping") would otherwise be
    // printed on stderr by libpqxx.
    pqxx::nontransaction(*conn).exec("SET client_min_messages TO warning");
    PrepareBatchStatements(*conn);
    PrepareCloseStatements(*conn);
    return Lease(this, std::move(conn));
  } catch (const std::exception& e) {
    lock.lock();
    --open_;
    cv_.notify_one();
    return absl::UnavailableError(absl::StrCat(
        "cannot connect to PostgreSQL: ", FirstLine(e.what()),
        " (check the connection string, that the server is running and accepts connections)"));
  }
}

absl::Status Database::FromSqlError(absl::string_view what, const pqxx::sql_error& e, Lease& lease) {
  const std::string& state = e.sqlstate();
  const std::string msg =
      absl::StrCat("PostgreSQL error while ", what, " (SQLSTATE ",
                   state.empty() ? std::string("unknown") : state, "): ", FirstLine(e.what()));
  // Class 08: connection exception; 57P01-03: the server is shutting down
  // or starting up. The connection is of no further use.
  if (absl::StartsWith(state, "08") || state == "57P01" || state == "57P02" || state == "57P03") {
    lease.MarkBroken();
    return absl::UnavailableError(msg);
  }
  // 57014: a statement cancelled (statement_timeout, pg_cancel_backend);
  // class 53: out of resources; 55P03: a lock not available. Nothing was
  // written and the same call can succeed later.
  if (state == "57014" || absl::StartsWith(state, "53") || state == "55P03") {
    return absl::UnavailableError(absl::StrCat(msg, "; nothing was written, retry"));
  }
  // Class 22: the data sent cannot be represented (bad input).
  if (absl::StartsWith(state, "22")) return absl::InvalidArgumentError(msg);
  return absl::InternalError(msg);
}

void Database::Release(std::unique_ptr<pqxx::connection> conn, bool broken) {
  std::lock_guard<std::mutex> lock(mu_);
  if (broken || !conn->is_open()) {
    --open_;
  } else {
    idle_.push_back(std::move(conn));
  }
  cv_.notify_one();
}

absl::StatusOr<bool> Database::TryAdvisoryLock(int64_t key) {
  std::lock_guard<std::mutex> lock(lock_mu_);
  try {
    if (lock_conn_ == nullptr || !lock_conn_->is_open()) lock_conn_ = std::make_unique<pqxx::connection>(conninfo_);
    pqxx::nontransaction txn(*lock_conn_);
    return txn.exec_params1("SELECT pg_try_advisory_lock($1)", key)[0].as<bool>();
  } catch (const std::exception& e) {
    lock_conn_.reset();
    return absl::UnavailableError(
        absl::StrCat("cannot take advisory lock ", key, " on PostgreSQL: ", FirstLine(e.what()), "; retry"));
  }
}

void Database::AdvisoryUnlock(int64_t key) {
  std::lock_guard<std::mutex> lock(lock_mu_);
  if (lock_conn_ == nullptr) return;  // lost with its connection: released already
  try {
    pqxx::nontransaction txn(*lock_conn_);
    txn.exec_params("SELECT pg_advisory_unlock($1)", key);
  } catch (const std::exception&) {
    lock_conn_.reset();  // closing the session releases its locks
  }
}

absl::StatusOr<std::unique_ptr<Database>> Database::Connect(const std::string& conninfo, int pool_size) {
  if (pool_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("pool size must be at least 1, not ", pool_size));
  }
  auto db = std::make_unique<Database>(conninfo, pool_size);
  // Open the first connection now, so a wrong address or a server that is
  // down is reported at start rather than on the first request.
  {
    auto lease = db->Acquire();
    PERFGATE_RETURN_IF_ERROR(lease);
  }
  return db;
}


}  // namespace perfgate::coordinator::store
