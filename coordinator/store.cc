#include "coordinator/store.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <pqxx/tablewriter>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/identity.h"
#include "common/stats.h"
#include "coordinator/ingest_checks.h"
#include "coordinator/migrations.h"
#include "coordinator/process_medians.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator {
namespace {

using Json = nlohmann::json;

// Key of the advisory lock that serialises migrations between coordinator
// replicas starting at the same time ("perfgate" in ASCII, truncated).
constexpr int64_t kMigrationLockKey = 0x7065726667617465;
// How long a call waits for a pooled connection before giving up.
constexpr auto kAcquireTimeout = std::chrono::seconds(30);
// Limits applied when a caller passes 0 (a proto field left unset) and the
// most any query returns, so one request cannot pull a whole table.
constexpr uint32_t kDefaultListLimit = 50;
constexpr uint32_t kDefaultBaselineLimit = 5;
constexpr uint32_t kDefaultHistoryLimit = 100;
constexpr uint32_t kMaxLimit = 10000;

// SQL expression turning microseconds since the epoch (a bigint parameter)
// into a timestamptz without going through floating point.
std::string TimestampFromMicros(int param) {
  return absl::StrCat("(to_timestamp(0) + $", param, "::bigint * interval '1 microsecond')");
}
// The reverse: exact, since extract() returns numeric.
std::string MicrosFromTimestamp(const std::string& column) {
  return absl::StrCat("(extract(epoch from ", column, ") * 1000000)::bigint");
}

int64_t ToMicros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
TimePoint FromMicros(int64_t us) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(us)));
}

uint32_t EffectiveLimit(uint32_t limit, uint32_t default_limit) {
  return limit == 0 ? default_limit : std::min(limit, kMaxLimit);
}

double NullableDouble(const pqxx::field& f) {
  return f.is_null() ? std::numeric_limits<double>::quiet_NaN() : f.as<double>();
}

// Run ids are UUIDs; PostgreSQL prints them in lower case, so comparisons made
// in C++ (exclude_run_id, a RunRecord's id) use that form too.
absl::StatusOr<std::string> NormalizeRunId(const std::string& run_id) {
  if (!IsUuid(run_id)) {
    return absl::InvalidArgumentError(
        absl::StrCat("run id '", run_id, "' is not a UUID (8-4-4-4-12 hex digits)"));
  }
  return absl::AsciiStrToLower(run_id);
}

std::string FirstLine(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  return std::string(text.substr(0, text.find('\n')));
}

// The columns RowToRun() reads, in order, from runs r joined with agents a and
// environments e.
const std::string& RunColumns() {
  static const std::string kColumns = absl::StrCat(
      "r.id::text, a.name, e.sku, e.fields::text, r.repo, r.branch, r.commit, r.trigger, "
      "r.ci_job, r.node, ",
      MicrosFromTimestamp("r.started_at"), ", array_to_json(r.parent_commits)::text, r.status, ",
      MicrosFromTimestamp("r.finished_at"),
      ", r.failure_reason, "
      "(SELECT coalesce(sum(b.sample_count), 0) FROM batches b WHERE b.run_id = r.id)::bigint, "
      "r.details::text, array_to_json(r.invalid_reasons)::text");
  return kColumns;
}
constexpr const char* kRunJoins =
    " FROM runs r JOIN agents a ON a.id = r.agent_id JOIN environments e ON e.id = "
    "r.environment_id ";

// Run details as stored (a JSON object): strings as they are, anything
// else as its JSON text.
RunDetails ParseDetails(const std::string& json) {
  RunDetails out;
  const Json parsed = Json::parse(json);
  for (const auto& [k, v] : parsed.items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return out;
}

RunRecord RowToRun(const pqxx::row& row) {
  RunRecord rec;
  RunMeta& m = rec.meta;
  m.run_id = row[0].as<std::string>();
  m.agent_name = row[1].as<std::string>();
  m.environment.sku = row[2].as<std::string>();
  const Json fields = Json::parse(row[3].as<std::string>());
  for (const auto& [k, v] : fields.items()) {
    m.environment.fields[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  m.repo = row[4].as<std::string>();
  m.branch = row[5].as<std::string>();
  m.commit = row[6].as<std::string>();
  if (!ParseTrigger(row[7].as<std::string>(), &m.trigger)) m.trigger = Trigger::kUnspecified;
  m.ci_job = row[8].as<std::string>();
  m.node = row[9].as<std::string>();
  m.started_at = FromMicros(row[10].as<int64_t>());
  m.parent_commits = Json::parse(row[11].as<std::string>()).get<std::vector<std::string>>();
  if (!ParseRunStatus(row[12].as<std::string>(), &rec.status)) rec.status = RunStatus::kUnspecified;
  if (!row[13].is_null()) rec.finished_at = FromMicros(row[13].as<int64_t>());
  rec.failure_reason = row[14].as<std::string>();
  rec.samples = row[15].as<uint64_t>();
  m.details = ParseDetails(row[16].as<std::string>());
  rec.invalid_reasons = Json::parse(row[17].as<std::string>()).get<std::vector<std::string>>();
  return rec;
}

// Rejects a case whose samples cannot be stored, before anything is written:
// each sample must carry one finite value per metric.
absl::Status ValidateCase(const CaseResult& c, size_t case_index) {
  const std::string key = c.benchmark.Key();
  if (c.benchmark.suite.empty() || c.benchmark.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("case ", case_index, " ('", key, "') has no suite or no name"));
  }
  if (c.metrics.empty() && !c.samples.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("benchmark ", key, " sends samples but declares no metrics"));
  }
  std::set<std::string> names;
  for (const MetricSpec& m : c.metrics) {
    if (m.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark ", key, " has a metric with no name"));
    }
    if (!names.insert(m.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark ", key, " declares metric '", m.name, "' twice"));
    }
  }
  for (const Sample& s : c.samples) {
    if (s.values.size() != c.metrics.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark ", key, " sample ", s.index, " has ", s.values.size(),
                       " values but the case declares ", c.metrics.size(),
                       " metrics (one value per metric, in order)"));
    }
    if (s.index > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark ", key, " sample index ", s.index, " is out of range"));
    }
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (!std::isfinite(s.values[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat("benchmark ", key, " sample ", s.index, " metric '", c.metrics[i].name,
                         "' is not a finite number (", s.values[i], ")"));
      }
    }
  }
  return absl::OkStatus();
}

// Looks up the id of a row by its unique key, running insert first when it is
// absent. Reads first so that the common case (it exists) is one statement
// and writes no tuple.
template <typename Insert>
int64_t LookupOrInsert(pqxx::work& txn, const std::string& select, const std::string& key,
                       Insert insert) {
  pqxx::result r = txn.exec_params(select, key);
  if (r.empty()) {
    // insert uses ON CONFLICT DO NOTHING: another transaction may add the
    // same key meanwhile, and the second SELECT (a new snapshot under READ
    // COMMITTED) then sees its row.
    insert();
    r = txn.exec_params(select, key);
  }
  return r.at(0).at(0).as<int64_t>();
}

// The id of an environment, stored once per content hash.
int64_t EnvironmentId(pqxx::work& txn, const Environment& environment) {
  const std::string hash = environment.Hash();
  return LookupOrInsert(txn, "SELECT id FROM environments WHERE hash = $1", hash, [&] {
    txn.exec_params(
        "INSERT INTO environments (hash, sku, fields) VALUES ($1, $2, $3::jsonb) "
        "ON CONFLICT (hash) DO NOTHING",
        hash, environment.sku, Json(environment.fields).dump());
  });
}

// The statements every batch and close runs, prepared once per connection
// (libpqxx sends the PREPARE on first use): parsed and planned once instead
// of once a batch.
void PrepareStatements(pqxx::connection& c) {
  c.prepare("run_for_share", "SELECT status FROM runs WHERE id = $1 FOR SHARE");
  c.prepare("batch_insert",
            "INSERT INTO batches (run_id, sequence, sample_count, digest, ranges) VALUES ($1, $2, $3, $4, $5::jsonb) "
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
            "INSERT INTO run_cases (run_id, benchmark_id, status, reason, noise) "
            "SELECT $1::uuid, (x->>'b')::bigint, x->>'status', x->>'reason', (x->>'noise')::float8 "
            "FROM jsonb_array_elements($2::jsonb) x ON CONFLICT (run_id, benchmark_id) DO UPDATE "
            "SET status = excluded.status, reason = excluded.reason, noise = excluded.noise "
            "WHERE excluded.status <> 'unspecified'");
  c.prepare("summary_placeholders",
            "INSERT INTO summaries (run_id, metric_id) "
            "SELECT $1::uuid, m::bigint FROM jsonb_array_elements_text($2::jsonb) m "
            "ON CONFLICT (run_id, metric_id) DO NOTHING");
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
  // Per metric of a run: throttled samples counted, the others' values in
  // their binary form (float8send, 8 bytes each) joined into one bytea:
  // cheaper to print and to read back than a float8[] in text.
  c.prepare("close_values",
            "SELECT metric_id, count(*) FILTER (WHERE throttled), "
            "coalesce(string_agg(float8send(value), '') FILTER (WHERE NOT throttled), ''::bytea) FROM samples "
            "WHERE run_id = $1 AND received_at >= $2::timestamptz AND received_at <= $3::timestamptz "
            "GROUP BY metric_id");
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
            "process_medians = excluded.process_medians");
}

// Rejects a calibration that cannot be stored, before anything is written.
absl::Status ValidateCalibration(const std::string& agent_name, const CalibrationSet& set) {
  if (agent_name.empty()) return absl::InvalidArgumentError("calibration has no agent name");
  if (set.node.empty()) return absl::InvalidArgumentError("calibration has no node");
  if (set.environment.sku.empty()) {
    return absl::InvalidArgumentError("calibration has no SKU in its environment");
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (size_t i = 0; i < set.entries.size(); ++i) {
    const CalibrationEntry& e = set.entries[i];
    if (auto s = ValidateCalibrationEntry(e, absl::StrCat("calibration entry ", i)); !s.ok()) return s;
    // One statement upserts them all; PostgreSQL refuses to touch a row twice.
    if (!seen.insert({e.benchmark, e.metric}).second) {
      return absl::InvalidArgumentError(absl::StrCat("calibration of benchmark ", e.benchmark,
                                                     " metric '", e.metric, "' appears twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

// A small pool of connections, opened lazily up to a maximum. Each operation
// borrows one connection for the length of its transaction; a connection that
// broke is dropped instead of being returned.
class Store::Pool {
 public:
  Pool(std::string conninfo, int size) : conninfo_(std::move(conninfo)), size_(std::max(size, 1)) {}

  // A borrowed connection, returned to the pool when destroyed.
  class Lease {
   public:
    Lease(Pool* pool, std::unique_ptr<pqxx::connection> conn)
        : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), conn_(std::move(o.conn_)), broken_(o.broken_) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (conn_ != nullptr) pool_->Release(std::move(conn_), broken_);
    }
    pqxx::connection& conn() { return *conn_; }
    void MarkBroken() { broken_ = true; }

   private:
    Pool* pool_;
    std::unique_ptr<pqxx::connection> conn_;
    bool broken_ = false;
  };

  absl::StatusOr<Lease> Acquire() {
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
      PrepareStatements(*conn);
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

  // Runs fn(connection) and turns every libpqxx exception into a status;
  // what names the operation in messages.
  template <typename F>
  auto Run(absl::string_view what, F&& fn) -> decltype(fn(std::declval<pqxx::connection&>())) {
    auto lease = Acquire();
    if (!lease.ok()) return lease.status();
    try {
      return fn(lease->conn());
    } catch (const pqxx::broken_connection& e) {
      lease->MarkBroken();
      return absl::UnavailableError(absl::StrCat("lost the PostgreSQL connection while ", what,
                                                 ": ", FirstLine(e.what()), "; retry"));
    } catch (const pqxx::in_doubt_error& e) {
      lease->MarkBroken();
      return absl::UnavailableError(
          absl::StrCat("lost the PostgreSQL connection while committing (", what,
                       "); the write may or may not have been applied, retrying it is safe: ",
                       FirstLine(e.what())));
    } catch (const pqxx::statement_completion_unknown& e) {
      lease->MarkBroken();
      return absl::UnavailableError(absl::StrCat(
          "lost track of a statement while ", what,
          "; it may or may not have been applied, retrying it is safe: ", FirstLine(e.what())));
    } catch (const pqxx::transaction_rollback& e) {
      // Serialization failure or deadlock: nothing was written; retry.
      return absl::AbortedError(absl::StrCat("PostgreSQL rolled back the transaction while ", what,
                                             ": ", FirstLine(e.what()), "; retry"));
    } catch (const pqxx::sql_error& e) {
      if (!lease->conn().is_open()) lease->MarkBroken();
      return FromSqlError(what, e, *lease);
    } catch (const std::exception& e) {
      if (!lease->conn().is_open()) lease->MarkBroken();
      return absl::InternalError(absl::StrCat("while ", what, ": ", FirstLine(e.what())));
    }
  }

 private:
  static absl::Status FromSqlError(absl::string_view what, const pqxx::sql_error& e, Lease& lease) {
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

  void Release(std::unique_ptr<pqxx::connection> conn, bool broken) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken || !conn->is_open()) {
      --open_;
    } else {
      idle_.push_back(std::move(conn));
    }
    cv_.notify_one();
  }

  const std::string conninfo_;
  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_;  // guarded by mu_
  int open_ = 0;                                         // idle + borrowed; guarded by mu_
};

Store::Store(std::unique_ptr<Pool> pool) : pool_(std::move(pool)) {}
Store::~Store() = default;

absl::StatusOr<std::unique_ptr<Store>> Store::Connect(const std::string& conninfo, int pool_size) {
  if (pool_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("pool size must be at least 1, not ", pool_size));
  }
  auto pool = std::make_unique<Pool>(conninfo, pool_size);
  // Open the first connection now, so a wrong address or a server that is
  // down is reported at start rather than on the first request.
  {
    auto lease = pool->Acquire();
    if (!lease.ok()) return lease.status();
  }
  return std::unique_ptr<Store>(new Store(std::move(pool)));
}

int Store::LatestSchemaVersion() {
  int latest = 0;
  for (const Migration& m : Migrations()) latest = std::max(latest, m.version);
  return latest;
}

absl::Status Store::Migrate() {
  for (const Migration& m : Migrations()) {
    absl::Status s =
        pool_->Run(absl::StrCat("applying migration ", m.name), [&](pqxx::connection& c) {
          pqxx::work txn(c, "migrate");
          // Held to the end of this transaction: a second coordinator waits here
          // and then finds the migration applied.
          txn.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
          txn.exec(
              "CREATE TABLE IF NOT EXISTS schema_migrations ("
              " version integer PRIMARY KEY,"
              " name text NOT NULL,"
              " applied_at timestamptz NOT NULL DEFAULT now())");
          if (!txn.exec_params("SELECT 1 FROM schema_migrations WHERE version = $1", m.version)
                   .empty()) {
            return absl::OkStatus();
          }
          txn.exec(m.sql);
          txn.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                          m.version, std::string(m.name));
          txn.commit();
          return absl::OkStatus();
        });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<int> Store::SchemaVersion() {
  return pool_->Run("reading the schema version", [&](pqxx::connection& c) -> absl::StatusOr<int> {
    pqxx::read_transaction txn(c);
    if (txn.exec("SELECT to_regclass('schema_migrations') IS NULL")[0][0].as<bool>()) return 0;
    return txn.exec("SELECT coalesce(max(version), 0) FROM schema_migrations")[0][0].as<int>();
  });
}

absl::StatusOr<int64_t> Store::RegisterAgent(const std::string& name, const std::string& hostname,
                                             const std::string& version) {
  if (name.empty()) return absl::InvalidArgumentError("agent name is empty");
  return pool_->Run("registering an agent", [&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::work txn(c);
    const int64_t id = txn.exec_params1(
                              "INSERT INTO agents (name, hostname, version) VALUES ($1, $2, $3) "
                              "ON CONFLICT (name) DO UPDATE SET hostname = excluded.hostname, "
                              "version = excluded.version, last_seen = now() RETURNING id",
                              name, hostname, version)[0]
                           .as<int64_t>();
    txn.commit();
    return id;
  });
}

absl::StatusOr<bool> Store::OpenRun(const RunMeta& meta) {
  auto run_id = NormalizeRunId(meta.run_id);
  if (!run_id.ok()) return run_id.status();
  if (meta.agent_name.empty()) return absl::InvalidArgumentError("run has no agent name");
  if (meta.environment.sku.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("run ", *run_id, " has no SKU in its environment"));
  }
  return pool_->Run("opening a run", [&](pqxx::connection& c) -> absl::StatusOr<bool> {
    pqxx::work txn(c);
    pqxx::result agent = txn.exec_params(
        "UPDATE agents SET last_seen = now() WHERE name = $1 RETURNING id", meta.agent_name);
    if (agent.empty()) {
      return absl::NotFoundError(absl::StrCat("agent '", meta.agent_name,
                                              "' is not registered; call RegisterAgent first"));
    }
    const int64_t agent_id = agent[0][0].as<int64_t>();

    // A resend of OpenRun changes nothing but the time the run was last heard
    // of, so look before writing; it must name the same run.
    pqxx::result existing = txn.exec_params(
        absl::StrCat("SELECT ", ingest::ReopenColumns(), " FROM runs WHERE id = $1"), *run_id);
    auto check_existing = [&](const std::string& status) -> absl::StatusOr<bool> {
      if (status == "running") {
        pqxx::result row = txn.exec_params(
            absl::StrCat("UPDATE runs SET heard_at = now() WHERE id = $1 AND status = 'running' RETURNING ",
                          ingest::ReopenColumns()),
            *run_id);
        if (!row.empty()) {
          if (absl::Status s = ingest::CheckReopen(row[0], agent_id, meta); !s.ok()) return s;
          txn.commit();
          return true;
        }  // closed meanwhile
      }
      return absl::AlreadyExistsError(absl::StrCat("run ", *run_id, " already finished (", status == "running" ? "closed meanwhile" : status,
                                                   "); a finished run cannot be reopened, start a "
                                                   "new run with a new id"));
    };
    if (!existing.empty()) return check_existing(existing[0][0].as<std::string>());

    const int64_t env_id = EnvironmentId(txn, meta.environment);

    // The agent's clock is preferred; an unset start time gets the server's.
    pqxx::result inserted = txn.exec_params(
        absl::StrCat(
            "INSERT INTO runs (id, agent_id, environment_id, sku, repo, branch, commit, "
            "parent_commits, trigger, ci_job, node, started_at, details, opened_at) VALUES ($1, $2, "
            "$3, $4, $5, $6, $7, ARRAY(SELECT jsonb_array_elements_text($8::jsonb)), $9, $10, $11, "
            "CASE WHEN $12::bigint = 0 THEN now() ELSE ",
            TimestampFromMicros(12), " END, $13::jsonb, now()) ON CONFLICT (id) DO NOTHING RETURNING 1"),
        *run_id, agent_id, env_id, meta.environment.sku, meta.repo, meta.branch, meta.commit,
        Json(meta.parent_commits).dump(), std::string(ToString(meta.trigger)), meta.ci_job,
        meta.node, ToMicros(meta.started_at), Json(meta.details).dump());
    if (inserted.empty()) {
      // Opened concurrently by a resend that won the race.
      const std::string status =
          txn.exec_params1("SELECT status FROM runs WHERE id = $1", *run_id)[0].as<std::string>();
      return check_existing(status);
    }
    txn.commit();
    return false;
  });
}

namespace {

// The benchmark and metric ids of one case, in the case's metric order.
using CaseIds = std::pair<int64_t, std::vector<int64_t>>;

// A batch's sample count, or why it is refused before anything is read.
absl::StatusOr<uint64_t> CheckBatch(uint64_t sequence, const std::vector<CaseResult>& cases) {
  if (sequence < 1 || sequence > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch sequence ", sequence, " is out of range; sequences start at 1"));
  }
  uint64_t sample_count = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (absl::Status s = ValidateCase(cases[i], i); !s.ok()) return s;
    sample_count += cases[i].samples.size();
  }
  if (sample_count > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError("batch has too many samples; split it");
  }
  return sample_count;
}

// Runs a statement prepared on every pooled connection (PrepareStatements).
template <typename... Args>
pqxx::result Prepared(pqxx::transaction_base& txn, const char* name, Args&&... args) {
  return txn.exec_prepared(name, std::forward<Args>(args)...);
}

// The ids of the benchmarks `keys` (key -> JSON of the row to insert), those
// not stored yet inserted first. Two statements when all exist: one.
std::map<std::string, int64_t> BenchmarkIds(pqxx::work& txn, const std::map<std::string, Json>& rows) {
  std::map<std::string, int64_t> ids;
  auto select = [&](const Json& keys) {
    for (const auto& row : Prepared(txn, "benchmark_ids", keys.dump())) {
      ids[row[0].as<std::string>()] = row[1].as<int64_t>();
    }
  };
  Json keys = Json::array();
  for (const auto& [key, row] : rows) keys.push_back(key);
  select(keys);
  Json missing = Json::array(), missing_keys = Json::array();
  for (const auto& [key, row] : rows) {
    if (ids.count(key) == 0) {
      missing.push_back(row);
      missing_keys.push_back(key);
    }
  }
  if (!missing.empty()) {
    // ON CONFLICT DO NOTHING waits for a concurrent insert of the same key;
    // the second SELECT (a new snapshot under READ COMMITTED) then sees it.
    Prepared(txn, "benchmark_insert", missing.dump());
    select(missing_keys);
  }
  return ids;
}

// A metric's definition: benchmark id, name, unit and direction (migration
// 0006: a different unit or direction is another metric, never a conflict).
using MetricDefinition = std::tuple<int64_t, std::string, std::string, std::string>;

MetricDefinition DefinitionOf(int64_t bench_id, const MetricSpec& m) {
  return {bench_id, m.name, m.unit, std::string(ToString(m.direction))};
}

// The ids of the metric definitions `wanted` (definition -> JSON of the row
// to insert), those not stored yet inserted first.
std::map<MetricDefinition, int64_t> MetricRows(pqxx::work& txn, const std::map<MetricDefinition, Json>& wanted) {
  std::map<MetricDefinition, int64_t> stored;
  auto select = [&](const Json& keys) {
    for (const auto& row : Prepared(txn, "metric_ids", keys.dump())) {
      stored[{row[0].as<int64_t>(), row[1].as<std::string>(), row[3].as<std::string>(),
              row[4].as<std::string>()}] = row[2].as<int64_t>();
    }
  };
  Json keys = Json::array();
  for (const auto& [key, row] : wanted) keys.push_back(row);
  select(keys);
  Json missing = Json::array();
  for (const auto& [key, row] : wanted) {
    if (stored.count(key) == 0) missing.push_back(row);
  }
  if (!missing.empty()) {
    Prepared(txn, "metric_insert", missing.dump());
    select(missing);
  }
  return stored;
}

// The run's row of each case, with how it ended once a batch says so (the
// last status a batch gives for a case wins, an unspecified one changes
// nothing), and a summary row (statistics NULL) per metric, so CloseRun also
// summarizes a case whose samples never came (n = 0).
void RecordRunCases(pqxx::work& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                    const std::vector<CaseIds>& ids) {
  std::map<int64_t, Json> run_cases;
  Json summary_metrics = Json::array();
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& cr = cases[i];
    for (int64_t metric_id : ids[i].second) summary_metrics.push_back(metric_id);
    Json& row = run_cases[ids[i].first];
    if (cr.status != CaseStatus::kUnspecified) {
      row = {{"b", ids[i].first}, {"status", ToString(cr.status)}, {"reason", cr.reason},
             {"noise", std::isfinite(cr.noise) ? cr.noise : 0.0}};
    } else if (row.is_null()) {
      row = {{"b", ids[i].first}, {"status", "unspecified"}, {"reason", ""}, {"noise", 0.0}};
    }
  }
  Json rows = Json::array();
  for (auto& [bench_id, row] : run_cases) rows.push_back(std::move(row));
  Prepared(txn, "run_cases_upsert", run_id, rows.dump());
  Prepared(txn, "summary_placeholders", run_id, summary_metrics.dump());
}

// Registers the cases of batch `sequence`: benchmarks and metrics when new
// (a few statements for the whole batch, not a few per case), the run's row
// per case and the summary placeholders, after the checks against what the
// run holds (one definition per metric, no sample index twice). Returns
// each case's ids.
absl::StatusOr<std::vector<CaseIds>> StoreCases(pqxx::work& txn, const std::string& run_id, int64_t sequence,
                                                const std::vector<CaseResult>& cases) {
  std::map<std::string, Json> bench_rows;
  for (const CaseResult& cr : cases) {
    const std::string key = cr.benchmark.Key();
    bench_rows.try_emplace(key, Json{{"key", key}, {"suite", cr.benchmark.suite},
                                     {"name", cr.benchmark.name}, {"params", Json(cr.benchmark.params)}});
  }
  const std::map<std::string, int64_t> bench_ids = BenchmarkIds(txn, bench_rows);
  std::map<MetricDefinition, Json> metric_rows;
  for (const CaseResult& cr : cases) {
    const int64_t bench_id = bench_ids.at(cr.benchmark.Key());
    for (const MetricSpec& m : cr.metrics) {
      metric_rows.try_emplace(DefinitionOf(bench_id, m), Json{{"b", bench_id}, {"name", m.name}, {"unit", m.unit},
                                                              {"direction", ToString(m.direction)}});
    }
  }
  const auto stored = MetricRows(txn, metric_rows);
  std::vector<CaseIds> ids;
  std::vector<std::vector<int64_t>> metric_ids;
  std::vector<int64_t> first_metric_ids;
  for (const CaseResult& cr : cases) {
    const int64_t bench_id = bench_ids.at(cr.benchmark.Key());
    std::vector<int64_t> case_metrics;
    for (const MetricSpec& m : cr.metrics) case_metrics.push_back(stored.at(DefinitionOf(bench_id, m)));
    first_metric_ids.push_back(case_metrics.empty() ? 0 : case_metrics.front());
    metric_ids.push_back(case_metrics);
    ids.emplace_back(bench_id, std::move(case_metrics));
  }
  if (absl::Status s = ingest::CheckOneDefinition(txn, run_id, cases, metric_ids); !s.ok()) return s;
  if (absl::Status s = ingest::CheckNewIndices(txn, run_id, sequence, cases, first_metric_ids); !s.ok()) return s;
  RecordRunCases(txn, run_id, cases, ids);
  return ids;
}

// The shortest text that reads back as v (std::to_chars): libpqxx 6 would
// print a double through a stream at 17 digits, the costliest part of COPY.
std::string DoubleText(double v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// Bytes of COPY text CopySamples hands to libpq at a time.
constexpr size_t kCopyChunk = 1 << 18;

// Appends the text of an integer or of the shortest double that reads back
// exactly (as DoubleText) to a line of COPY text.
template <typename T>
void AppendNumber(std::string* line, T v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  line->append(buf, res.ptr);
}

// The batch's samples, one row per sample and metric, through COPY. The
// rows are written as COPY text in chunks of kCopyChunk bytes: libpqxx 6's
// stream_to converts, escapes and joins every field of every row, which
// cost more than PostgreSQL's parsing of them, and no field here needs
// escaping (a UUID, integers, finite doubles, t or f).
void CopySamples(pqxx::work& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                 const std::vector<CaseIds>& ids) {
  const std::vector<std::string> columns = {"run_id", "benchmark_id", "metric_id", "idx", "value", "throttled"};
  // tablewriter is the class of libpqxx 6 that writes raw COPY text
  // (stream_to keeps that private); deprecated there in favour of stream_to.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  pqxx::tablewriter copy(txn, "samples", columns.begin(), columns.end());
#pragma GCC diagnostic pop
  std::string chunk;
  chunk.reserve(kCopyChunk + 256);
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& [bench_id, metric_ids] = ids[ci];
    std::vector<std::string> prefixes;  // "run\tbenchmark\tmetric\t" of each metric
    for (const int64_t metric_id : metric_ids) prefixes.push_back(absl::StrCat(run_id, "\t", bench_id, "\t", metric_id, "\t"));
    for (const Sample& s : cases[ci].samples) {
      for (size_t mi = 0; mi < metric_ids.size(); ++mi) {
        chunk += prefixes[mi];
        AppendNumber(&chunk, s.index);
        chunk += '\t';
        AppendNumber(&chunk, s.values[mi]);
        chunk += s.throttled ? "\tt\n" : "\tf\n";
      }
      if (chunk.size() >= kCopyChunk) {
        copy.write_raw_line(chunk);  // one final newline is taken off here and put back by libpqxx
        chunk.clear();
      }
    }
  }
  if (!chunk.empty()) copy.write_raw_line(chunk);
  copy.complete();
}

// The cases and samples a run holds so far.
CloseOutcome StoredCounts(pqxx::transaction_base& txn, const std::string& run_id) {
  CloseOutcome out;
  const pqxx::row row = Prepared(txn, "stored_counts", run_id).at(0);
  out.cases = row[0].as<uint32_t>();
  out.samples = row[1].as<uint64_t>();
  return out;
}

// Every batch the agent says it sent must be here, or the summaries would
// silently leave samples out.
absl::Status CheckBatchesArrived(pqxx::transaction_base& txn, const std::string& run_id,
                                 uint64_t last_sequence) {
  uint64_t expected = 1;
  for (const auto& row : txn.exec_params(
           "SELECT sequence FROM batches WHERE run_id = $1 AND sequence <= $2 ORDER BY sequence",
           run_id,
           static_cast<int64_t>(
               std::min<uint64_t>(last_sequence, std::numeric_limits<int64_t>::max())))) {
    if (row[0].as<uint64_t>() != expected) break;
    ++expected;
  }
  if (expected <= last_sequence) {
    return absl::FailedPreconditionError(
        absl::StrCat("batch ", expected, " of ", last_sequence, " of run ", run_id,
                     " never arrived; resend the missing batches before closing the run"));
  }
  return absl::OkStatus();
}

// Parses a number PostgreSQL printed (integer or float8 text), exactly.
template <typename T>
T ParseNumber(const pqxx::field& f) {
  T v{};
  const char* begin = f.c_str();
  std::from_chars(begin, begin + f.size(), v);
  return v;
}

// Appends the numbers of a float8[] PostgreSQL printed ("{1.5,2,...}") to out.
void ParseFloatArray(const pqxx::field& f, std::vector<double>& out) {
  const char* p = f.c_str();
  const char* end = p + f.size();
  while (p < end && (*p == '{' || *p == ',' || *p == '}')) ++p;
  while (p < end) {
    double v = 0;
    const auto res = std::from_chars(p, end, v);
    if (res.ec != std::errc()) break;
    out.push_back(v);
    p = res.ptr;
    while (p < end && (*p == ',' || *p == '}')) ++p;
  }
}

// The big-endian numbers of type T (double for float8send, int32_t for
// int4send) that one bytea holds joined, in order, as doubles.
template <typename T>
std::vector<double> ParseBinaryNumbers(const pqxx::field& f) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  const pqxx::binarystring bytes(f);
  std::vector<double> out;
  out.reserve(bytes.size() / sizeof(T));
  for (size_t at = 0; at + sizeof(T) <= bytes.size(); at += sizeof(T)) {
    Bits bits = 0;
    for (size_t i = 0; i < sizeof(T); ++i) bits = static_cast<Bits>(bits << 8 | bytes.data()[at + i]);
    out.push_back(static_cast<double>(std::bit_cast<T>(bits)));
  }
  return out;
}

// The values of one aggregation's values and their sample indexes (exact
// as doubles: integers below 2^31), sorted by sample index.
std::vector<double> InSampleOrder(std::vector<double> values, std::vector<double> idx) {
  if (idx.size() != values.size()) idx.assign(values.size(), 0);  // never: one aggregation
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return idx[a] < idx[b]; });
  std::vector<double> out;
  out.reserve(values.size());
  for (size_t i : order) out.push_back(values[i]);
  return out;
}

// The bounds of a run's received_at, as timestamptz text parameters that
// let PostgreSQL read only the partitions the run can be in (see migration
// 0007): [opened_at, finished_at], a day wider on each side for a server
// clock that stepped; unbounded for a run opened before opened_at existed
// or still running.
constexpr const char* kRunBounds =
    "coalesce(opened_at - interval '1 day', '-infinity')::text, "
    "coalesce(finished_at + interval '1 day', 'infinity')::text";

// One metric of a run being closed: its case, its unthrottled values (in
// sample order where the run has process blocks), and how many throttled
// ones were left out.
struct MetricValues {
  std::string benchmark;
  std::vector<double> values;
  uint32_t throttled = 0;
};

// What CloseRun reads of a running run in one snapshot: its batches (to
// tell later whether any arrived meanwhile), its details and its samples.
struct CloseRead {
  std::optional<CloseOutcome> already_closed;  // a resent CloseRun: nothing to do
  std::string batches;                         // count, sum and max of the run's batches
  RunDetails details;
  bool blocked = false;  // several processes took the samples: their medians are stored too
  std::map<int64_t, MetricValues> metrics;     // by metric id
};

// Reads the run's unthrottled values per metric into out.metrics, one row
// per metric, its values one bytea: 400 rows to take apart rather than
// 400k. For a run with process blocks, in sample order (the order
// GetSamples gives the gate).
void ReadCloseValues(pqxx::transaction_base& txn, const std::string& run_id, const std::string& from,
                     const std::string& to, CloseRead& out) {
  if (!out.blocked) {
    for (const auto& row : Prepared(txn, "close_values", run_id, from, to)) {
      MetricValues& m = out.metrics[ParseNumber<int64_t>(row[0])];
      m.throttled = ParseNumber<uint32_t>(row[1]);
      m.values = ParseBinaryNumbers<double>(row[2]);
    }
    return;
  }
  for (const auto& row : Prepared(txn, "close_values_indexed", run_id, from, to)) {
    MetricValues& m = out.metrics[ParseNumber<int64_t>(row[0])];
    m.throttled = ParseNumber<uint32_t>(row[1]);
    m.values = InSampleOrder(ParseBinaryNumbers<double>(row[2]), ParseBinaryNumbers<int32_t>(row[3]));
  }
}

absl::StatusOr<CloseRead> ReadForClose(pqxx::transaction_base& txn, const std::string& run_id,
                                       const std::string& new_status, uint64_t last_sequence) {
  CloseRead out;
  pqxx::result run =
      txn.exec_params(absl::StrCat("SELECT status, ", kRunBounds, ", details::text FROM runs WHERE id = $1"), run_id);
  if (run.empty()) return absl::NotFoundError(absl::StrCat("run ", run_id, " does not exist"));
  const std::string current = run[0][0].as<std::string>();
  if (current != "running") {
    if (current != new_status) {
      return absl::FailedPreconditionError(absl::StrCat("run ", run_id, " was already closed as ", current,
                                                        "; it cannot be closed again as ", new_status));
    }
    out.already_closed = StoredCounts(txn, run_id);  // a resent CloseRun
    return out;
  }
  const RunStatus closing = new_status == ToString(RunStatus::kComplete) ? RunStatus::kComplete : RunStatus::kFailed;
  if (absl::Status s = ingest::CheckCloseAgainstStored(txn, run_id, closing, last_sequence); !s.ok()) return s;
  // A failed run is closed with what it has, a missing batch included.
  if (closing == RunStatus::kComplete) {
    if (absl::Status s = CheckBatchesArrived(txn, run_id, last_sequence); !s.ok()) return s;
  }
  out.batches = Prepared(txn, "batch_print", run_id).at(0)[0].as<std::string>();
  out.details = ParseDetails(run[0][3].as<std::string>());
  out.blocked = HasProcessBlocks(out.details);
  for (const auto& row : txn.exec_params(
           "SELECT s.metric_id, b.key FROM summaries s JOIN metrics m ON m.id = s.metric_id "
           "JOIN benchmarks b ON b.id = m.benchmark_id WHERE s.run_id = $1",
           run_id)) {
    out.metrics[row[0].as<int64_t>()].benchmark = row[1].as<std::string>();
  }
  ReadCloseValues(txn, run_id, run[0][1].as<std::string>(), run[0][2].as<std::string>(), out);
  return out;
}

// The medians of a metric's processes as a JSON array (null when a
// median is not finite: the gate then reads the samples).
Json ProcessMediansRow(const CloseRead& read, const MetricValues& v, const stats::Summary& s) {
  const std::vector<double> medians = ComputeProcessMedians(read.details, v.benchmark, v.values, s.n, s.median);
  if (!std::all_of(medians.begin(), medians.end(), [](double x) { return std::isfinite(x); })) return nullptr;
  return Json(medians);
}

// The summary row (JSON) of one metric, over its unthrottled samples, with
// how many throttled ones were left out and, for a run of several
// processes, the processes' medians.
Json SummaryRow(const CloseRead& read, int64_t metric_id, const MetricValues& v) {
  const stats::Summary s = stats::Summarize(v.values);
  // JSON has no NaN: statistics of an empty set are stored as NULL.
  auto num = [&](double x) { return std::isfinite(x) && s.n > 0 ? Json(x) : Json(nullptr); };
  return {{"metric_id", metric_id},
          {"n", s.n},
          {"n_throttled", v.throttled},
          {"process_medians", read.blocked ? ProcessMediansRow(read, v, s) : Json(nullptr)},
          {"median", num(s.median)},
          {"mean", num(s.mean)},
          {"stdev", num(s.stdev)},
          {"min", num(s.min)},
          {"max", num(s.max)},
          {"noise", num(s.noise)},
          {"mad", num(s.mad)},
          {"p5", num(s.p5)},
          {"p95", num(s.p95)},
          {"median_ci_low", num(s.median_ci_low)},
          {"median_ci_high", num(s.median_ci_high)}};
}

// The summary rows of every metric of the run, a large run's on two
// threads (no connection is held meanwhile).
Json SummaryRows(const CloseRead& read) {
  std::vector<std::pair<int64_t, const MetricValues*>> metrics;
  for (const auto& [id, v] : read.metrics) metrics.emplace_back(id, &v);
  auto rows_of = [&](size_t from, size_t to) {
    Json rows = Json::array();
    for (size_t i = from; i < to; ++i) rows.push_back(SummaryRow(read, metrics[i].first, *metrics[i].second));
    return rows;
  };
  constexpr size_t kParallelFrom = 64;  // metrics; fewer are summarized in well under a millisecond
  if (metrics.size() < kParallelFrom) return rows_of(0, metrics.size());
  const size_t half = metrics.size() / 2;
  auto second = std::async(std::launch::async, rows_of, half, metrics.size());
  Json rows = rows_of(0, half);
  for (Json& row : second.get()) rows.push_back(std::move(row));
  return rows;
}

// Writes what ReadForClose saw and SummaryRows made, unless a batch arrived
// in between (then nullopt: read again).
absl::StatusOr<std::optional<CloseOutcome>> WriteClose(pqxx::work& txn, const std::string& run_id,
                                                       const std::string& new_status, const CloseRead& read,
                                                       const Json& rows, const std::string& reason,
                                                       const std::vector<std::string>& invalid_reasons) {
  // FOR UPDATE waits for batches being stored (they hold FOR SHARE) and
  // keeps new ones out until the run is closed.
  pqxx::result run = txn.exec_params("SELECT status FROM runs WHERE id = $1 FOR UPDATE", run_id);
  if (run.empty()) return absl::NotFoundError(absl::StrCat("run ", run_id, " does not exist"));
  if (run[0][0].as<std::string>() != "running" ||
      Prepared(txn, "batch_print", run_id).at(0)[0].as<std::string>() != read.batches) {
    return std::optional<CloseOutcome>();
  }
  Prepared(txn, "summaries_write", run_id, rows.dump());
  txn.exec_params(
      "UPDATE runs SET status = $2, finished_at = now(), failure_reason = $3, "
      "invalid_reasons = ARRAY(SELECT jsonb_array_elements_text($4::jsonb)) WHERE id = $1",
      run_id, new_status, reason, Json(invalid_reasons).dump());
  CloseOutcome out = StoredCounts(txn, run_id);
  txn.commit();
  return std::optional<CloseOutcome>(out);
}

}  // namespace

absl::StatusOr<BatchOutcome> Store::StoreBatch(const std::string& raw_run_id, uint64_t sequence,
                                               const std::vector<CaseResult>& cases) {
  auto run_id = NormalizeRunId(raw_run_id);
  if (!run_id.ok()) return run_id.status();
  auto checked = CheckBatch(sequence, cases);
  if (!checked.ok()) return checked.status();
  const uint64_t sample_count = *checked;
  const std::string digest = ingest::BatchDigest(cases);

  return pool_->Run("storing a batch", [&](pqxx::connection& c) -> absl::StatusOr<BatchOutcome> {
    pqxx::work txn(c);
    // FOR SHARE: batches of one run are stored concurrently, but CloseRun
    // (FOR UPDATE) waits for them, so it never summarizes half a batch.
    pqxx::result run = Prepared(txn, "run_for_share", *run_id);
    if (run.empty()) {
      return absl::NotFoundError(
          absl::StrCat("run ", *run_id, " does not exist; call OpenRun before sending results"));
    }
    const std::string status = run[0][0].as<std::string>();
    const auto seq = static_cast<int64_t>(sequence);
    BatchOutcome outcome;
    if (status != "running") {
      // A resend of a batch stored before the run closed is still a duplicate.
      if (!txn.exec_params("SELECT 1 FROM batches WHERE run_id = $1 AND sequence = $2", *run_id, seq)
               .empty()) {
        if (absl::Status s = ingest::CheckResentBatch(txn, *run_id, seq, digest); !s.ok()) return s;
        outcome.duplicate = true;
        return outcome;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "run ", *run_id, " is ", status, "; results are accepted only while a run is running"));
    }
    if (Prepared(txn, "batch_insert", *run_id, seq, static_cast<int64_t>(sample_count), digest,
                 ingest::IndexRanges(cases))
            .empty()) {
      if (absl::Status s = ingest::CheckResentBatch(txn, *run_id, seq, digest); !s.ok()) return s;
      outcome.duplicate = true;
      txn.commit();
      return outcome;
    }
    auto ids = StoreCases(txn, *run_id, seq, cases);
    if (!ids.ok()) return ids.status();
    if (sample_count > 0) CopySamples(txn, *run_id, cases, *ids);
    txn.commit();
    outcome.samples_stored = static_cast<uint32_t>(sample_count);
    return outcome;
  });
}

absl::StatusOr<CloseOutcome> Store::CloseRun(const std::string& raw_run_id, RunStatus status,
                                             uint64_t last_sequence, const std::string& reason,
                                             const std::vector<std::string>& invalid_reasons) {
  auto run_id = NormalizeRunId(raw_run_id);
  if (!run_id.ok()) return run_id.status();
  if (status != RunStatus::kComplete && status != RunStatus::kFailed) {
    return absl::InvalidArgumentError(
        absl::StrCat("a run is closed as complete or failed, not ", ToString(status)));
  }
  const std::string new_status = ToString(status);
  // Read the samples in one snapshot, summarize them with no connection
  // held and no lock taken, then write under the run's lock if no batch
  // came in between. A batch arriving meanwhile (the agent still sending)
  // means reading again; a few times at most.
  constexpr int kAttempts = 4;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto read = pool_->Run("closing a run", [&](pqxx::connection& c) -> absl::StatusOr<CloseRead> {
      pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(c);
      return ReadForClose(txn, *run_id, new_status, last_sequence);
    });
    if (!read.ok()) return read.status();
    if (read->already_closed) return *read->already_closed;
    const Json rows = SummaryRows(*read);
    read->metrics.clear();
    auto written = pool_->Run("closing a run", [&](pqxx::connection& c) -> absl::StatusOr<std::optional<CloseOutcome>> {
      pqxx::work txn(c);
      return WriteClose(txn, *run_id, new_status, *read, rows, reason, invalid_reasons);
    });
    if (!written.ok()) return written.status();
    if (written->has_value()) return **written;
  }
  return absl::AbortedError(absl::StrCat("run ", *run_id, " kept receiving batches while being closed (",
                                         kAttempts, " attempts); close it once its batches are sent"));
}

absl::StatusOr<RunRecord> Store::GetRun(const std::string& raw_run_id) {
  auto run_id = NormalizeRunId(raw_run_id);
  if (!run_id.ok()) return run_id.status();
  return pool_->Run("reading a run", [&](pqxx::connection& c) -> absl::StatusOr<RunRecord> {
    pqxx::read_transaction txn(c);
    pqxx::result r = txn.exec_params(
        absl::StrCat("SELECT ", RunColumns(), kRunJoins, "WHERE r.id = $1"), *run_id);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
    return RowToRun(r[0]);
  });
}

absl::StatusOr<std::vector<RunRecord>> Store::ListRuns(const std::string& branch,
                                                       const std::string& sku, uint32_t limit) {
  return pool_->Run(
      "listing runs", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<RunRecord>> {
        pqxx::read_transaction txn(c);
        std::vector<RunRecord> runs;
        for (const auto& row : txn.exec_params(
                 absl::StrCat("SELECT ", RunColumns(), kRunJoins,
                              "WHERE ($1 = '' OR r.branch = $1) AND ($2 = '' OR r.sku = $2) "
                              "ORDER BY r.started_at DESC, r.id LIMIT $3"),
                 branch, sku, static_cast<int64_t>(EffectiveLimit(limit, kDefaultListLimit)))) {
          runs.push_back(RowToRun(row));
        }
        return runs;
      });
}

absl::StatusOr<std::vector<MetricSummary>> Store::GetSummaries(const std::string& run_id) {
  auto stored = GetGateSummaries(run_id);
  if (!stored.ok()) return stored.status();
  std::vector<MetricSummary> out;
  out.reserve(stored->size());
  for (StoredSummary& s : *stored) out.push_back(std::move(s.summary));
  return out;
}

absl::StatusOr<std::vector<StoredSummary>> Store::GetGateSummaries(const std::string& raw_run_id) {
  auto run_id = NormalizeRunId(raw_run_id);
  if (!run_id.ok()) return run_id.status();
  return pool_->Run(
      "reading summaries", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<StoredSummary>> {
        pqxx::read_transaction txn(c);
        if (txn.exec_params("SELECT 1 FROM runs WHERE id = $1", *run_id).empty()) {
          return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
        }
        std::vector<StoredSummary> out;
        // COLLATE "C": byte order, the order std::string comparison gives, on any
        // database locale.
        for (const auto& row : txn.exec_params(
                 "SELECT b.key, m.name, m.unit, m.direction, s.n, s.n_throttled, s.median, s.mean, "
                 "s.stdev, s.min, s.max, s.noise, coalesce(rc.status, 'unspecified'), "
                 "coalesce(rc.reason, ''), s.mad, s.p5, s.p95, s.median_ci_low, s.median_ci_high, "
                 "s.process_medians "
                 "FROM summaries s JOIN metrics m ON m.id = s.metric_id "
                 "JOIN benchmarks b ON b.id = m.benchmark_id "
                 "LEFT JOIN run_cases rc ON rc.run_id = s.run_id AND rc.benchmark_id = b.id "
                 "WHERE s.run_id = $1 ORDER BY b.key COLLATE \"C\", m.name COLLATE \"C\"",
                 *run_id)) {
          StoredSummary stored;
          MetricSummary& ms = stored.summary;
          ms.benchmark = row[0].as<std::string>();
          ms.metric = row[1].as<std::string>();
          ms.unit = row[2].as<std::string>();
          ParseDirection(row[3].as<std::string>(), &ms.direction);
          ms.n = row[4].as<uint32_t>();
          ms.n_throttled = row[5].as<uint32_t>();
          ms.median = NullableDouble(row[6]);
          ms.mean = NullableDouble(row[7]);
          ms.stdev = NullableDouble(row[8]);
          ms.min = NullableDouble(row[9]);
          ms.max = NullableDouble(row[10]);
          ms.noise = NullableDouble(row[11]);
          ParseCaseStatus(row[12].as<std::string>(), &ms.status);
          ms.reason = row[13].as<std::string>();
          ms.mad = NullableDouble(row[14]);
          ms.p5 = NullableDouble(row[15]);
          ms.p95 = NullableDouble(row[16]);
          ms.median_ci_low = NullableDouble(row[17]);
          ms.median_ci_high = NullableDouble(row[18]);
          if (!row[19].is_null()) ParseFloatArray(row[19], stored.process_medians.emplace());
          out.push_back(std::move(stored));
        }
        return out;
      });
}

absl::StatusOr<RunSamples> Store::GetSamples(const std::string& raw_run_id) {
  auto run_id = NormalizeRunId(raw_run_id);
  if (!run_id.ok()) return run_id.status();
  return pool_->Run("reading samples", [&](pqxx::connection& c) -> absl::StatusOr<RunSamples> {
    pqxx::read_transaction txn(c);
    pqxx::result run = txn.exec_params(absl::StrCat("SELECT ", kRunBounds, " FROM runs WHERE id = $1"), *run_id);
    if (run.empty()) return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
    std::map<int64_t, std::pair<std::string, std::string>> names;  // metric id -> (benchmark key, metric)
    for (const auto& row : txn.exec_params(
             "SELECT m.id, b.key, m.name FROM summaries s JOIN metrics m ON m.id = s.metric_id "
             "JOIN benchmarks b ON b.id = m.benchmark_id WHERE s.run_id = $1",
             *run_id)) {
      names[row[0].as<int64_t>()] = {row[1].as<std::string>(), row[2].as<std::string>()};
    }
    // One row per metric, its unthrottled values in sample order as one
    // array: a few hundred rows to take apart rather than a row per value.
    RunSamples out;
    for (const auto& row : Prepared(txn, "run_values", *run_id, run[0][0].as<std::string>(),
                                    run[0][1].as<std::string>())) {
      auto name = names.find(ParseNumber<int64_t>(row[0]));
      if (name == names.end()) continue;
      std::vector<double> idx, values;
      ParseFloatArray(row[1], idx);
      ParseFloatArray(row[2], values);
      out[name->second] = InSampleOrder(std::move(values), std::move(idx));
    }
    return out;
  });
}

absl::StatusOr<std::vector<RunRecord>> Store::FindBaselineRuns(const BaselineQuery& q) {
  if (q.branch.empty() || q.sku.empty()) {
    return absl::InvalidArgumentError("a baseline query needs a branch and a SKU");
  }
  const std::string exclude = absl::AsciiStrToLower(q.exclude_run_id);
  return pool_->Run(
      "finding baseline runs", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<RunRecord>> {
        pqxx::read_transaction txn(c);
        std::vector<RunRecord> runs;
        for (const auto& row : txn.exec_params(
                 absl::StrCat(
                     "SELECT ", RunColumns(), kRunJoins,
                     "WHERE r.status = 'complete' AND r.branch = $1 AND r.sku = $2 "
                     "AND r.id::text <> $3 "
                     "AND ($4 = '[]' OR r.commit IN (SELECT jsonb_array_elements_text($4::jsonb))) "
                     "ORDER BY r.finished_at DESC, r.id LIMIT $5"),
                 q.branch, q.sku, exclude, Json(q.allowed_commits).dump(),
                 static_cast<int64_t>(EffectiveLimit(q.limit, kDefaultBaselineLimit)))) {
          runs.push_back(RowToRun(row));
        }
        return runs;
      });
}

absl::StatusOr<std::vector<RunRecord>> Store::FindSweepRuns(const std::string& sku,
                                                            const std::string& sweep) {
  if (sku.empty() || sweep.empty()) return absl::InvalidArgumentError("a sweep query needs a SKU and a sweep id");
  return pool_->Run(
      "finding sweep runs", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<RunRecord>> {
        pqxx::read_transaction txn(c);
        std::vector<RunRecord> runs;
        for (const auto& row : txn.exec_params(
                 absl::StrCat("SELECT ", RunColumns(), kRunJoins,
                              "WHERE r.status = 'complete' AND r.sku = $1 "
                              "AND (r.details->>'slurm_array_job_id' = $2 "
                              "OR r.details->>'slurm_job_id' = $2 OR r.ci_job = $2) "
                              "ORDER BY r.finished_at DESC, r.id"),
                 sku, sweep)) {
          runs.push_back(RowToRun(row));
        }
        return runs;
      });
}

absl::StatusOr<HistorySeries> Store::GetHistory(const std::string& benchmark_key,
                                                const std::string& metric, const std::string& sku,
                                                const std::string& branch, uint32_t limit) {
  return pool_->Run("reading history", [&](pqxx::connection& c) -> absl::StatusOr<HistorySeries> {
    pqxx::read_transaction txn(c);
    pqxx::result m = SeriesDefinition(txn, benchmark_key, metric);
    if (m.empty()) {
      return absl::NotFoundError(absl::StrCat("no results stored for benchmark ", benchmark_key,
                                              " metric '", metric, "'"));
    }
    HistorySeries series;
    series.unit = m[0][1].as<std::string>();
    ParseDirection(m[0][2].as<std::string>(), &series.direction);
    // The newest `limit` points, then turned oldest first.
    for (const auto& row : txn.exec_params(
             absl::StrCat("SELECT * FROM (SELECT r.id::text, r.commit, r.branch, r.node, ",
                          MicrosFromTimestamp("r.finished_at"),
                          " AS finished, s.median, s.n, r.finished_at AS f "
                          "FROM summaries s JOIN runs r ON r.id = s.run_id "
                          "WHERE s.metric_id = $1 AND r.status = 'complete' AND s.n > 0 "
                          "AND ($2 = '' OR r.sku = $2) AND ($3 = '' OR r.branch = $3) "
                          "ORDER BY r.finished_at DESC, r.id LIMIT $4) newest ORDER BY f, 1"),
             m[0][0].as<int64_t>(), sku, branch,
             static_cast<int64_t>(EffectiveLimit(limit, kDefaultHistoryLimit)))) {
      HistoryPoint p;
      p.run_id = row[0].as<std::string>();
      p.commit = row[1].as<std::string>();
      p.branch = row[2].as<std::string>();
      p.node = row[3].as<std::string>();
      p.finished_at = FromMicros(row[4].as<int64_t>());
      p.median = row[5].as<double>();
      p.n = row[6].as<uint32_t>();
      series.points.push_back(std::move(p));
    }
    return series;
  });
}

absl::StatusOr<uint32_t> Store::PutCalibration(const std::string& agent_name,
                                               const CalibrationSet& set) {
  if (auto s = ValidateCalibration(agent_name, set); !s.ok()) return s;
  Json rows = Json::array();
  for (const CalibrationEntry& e : set.entries) {
    rows.push_back({{"benchmark", e.benchmark},
                    {"metric", e.metric},
                    {"unit", e.unit},
                    {"direction", ToString(e.direction)},
                    {"spread", DoubleText(e.spread)},
                    {"processes", e.processes}});
  }
  return pool_->Run("storing a calibration", [&](pqxx::connection& c) -> absl::StatusOr<uint32_t> {
    pqxx::work txn(c);
    pqxx::result agent = txn.exec_params(
        "UPDATE agents SET last_seen = now() WHERE name = $1 RETURNING id", agent_name);
    if (agent.empty()) {
      return absl::NotFoundError(absl::StrCat("agent '", agent_name,
                                              "' is not registered; call RegisterAgent first"));
    }
    const int64_t env_id = EnvironmentId(txn, set.environment);
    // The WHERE of the update keeps the newest measurement: an older one
    // arriving late (a resend, a slow agent) writes nothing.
    const pqxx::result written = txn.exec_params(
        absl::StrCat(
            "INSERT INTO calibrations (sku, node, environment_hash, environment_id, agent_id, "
            "benchmark, metric, unit, direction, spread, processes, measured_at) "
            "SELECT $1, $2, $3, $4, $5, x->>'benchmark', x->>'metric', x->>'unit', "
            "x->>'direction', (x->>'spread')::float8, (x->>'processes')::int, ",
            TimestampFromMicros(6),
            " FROM jsonb_array_elements($7::jsonb) x "
            "ON CONFLICT (sku, node, environment_hash, benchmark, metric) DO UPDATE SET "
            "environment_id = excluded.environment_id, agent_id = excluded.agent_id, "
            "unit = excluded.unit, direction = excluded.direction, spread = excluded.spread, "
            "processes = excluded.processes, measured_at = excluded.measured_at, stored_at = now() "
            "WHERE calibrations.measured_at <= excluded.measured_at RETURNING 1"),
        set.environment.sku, set.node, set.environment.Hash(), env_id, agent[0][0].as<int64_t>(),
        ToMicros(set.measured_at), rows.dump());
    txn.commit();
    return static_cast<uint32_t>(written.size());
  });
}

absl::StatusOr<std::vector<CalibrationRecord>> Store::GetCalibrations(
    const std::string& sku, const std::string& node, const std::string& environment_hash,
    std::optional<std::chrono::seconds> max_age) {
  // The cutoff by this process's clock, the one gates and listings tell age by.
  const int64_t cutoff = max_age ? ToMicros(std::chrono::system_clock::now() - *max_age) : 0;
  return pool_->Run(
      "reading calibrations",
      [&](pqxx::connection& c) -> absl::StatusOr<std::vector<CalibrationRecord>> {
        pqxx::read_transaction txn(c);
        std::vector<CalibrationRecord> out;
        for (const auto& row : txn.exec_params(
                 absl::StrCat("SELECT sku, node, environment_hash, benchmark, metric, unit, "
                              "direction, spread, processes, ",
                              MicrosFromTimestamp("measured_at"),
                              " FROM calibrations WHERE ($1 = '' OR sku = $1) "
                              "AND ($2 = '' OR node = $2) AND ($3 = '' OR environment_hash = $3) "
                              "AND (NOT $4 OR measured_at >= ",
                              TimestampFromMicros(5),
                              ") ORDER BY sku COLLATE \"C\", node COLLATE \"C\", "
                              "benchmark COLLATE \"C\", metric COLLATE \"C\", measured_at DESC"),
                 sku, node, environment_hash, max_age.has_value(), cutoff)) {
          CalibrationRecord r;
          r.sku = row[0].as<std::string>();
          r.node = row[1].as<std::string>();
          r.environment_hash = row[2].as<std::string>();
          r.entry.benchmark = row[3].as<std::string>();
          r.entry.metric = row[4].as<std::string>();
          r.entry.unit = row[5].as<std::string>();
          ParseDirection(row[6].as<std::string>(), &r.entry.direction);
          r.entry.spread = row[7].as<double>();
          r.entry.processes = row[8].as<unsigned>();
          r.measured_at = FromMicros(row[9].as<int64_t>());
          out.push_back(std::move(r));
        }
        return out;
      });
}

namespace {

// Key of the advisory lock under which partitions are made ("samplprt").
constexpr int64_t kPartitionLockKey = 0x73616d706c707274;
// Runs removed per transaction by ExpireRuns: a bounded time each.
constexpr int kExpireChunk = 100;

// The first day of a UTC month as text PostgreSQL reads, and the month's
// partition name.
struct Month {
  std::chrono::year_month ym;
  std::string Start() const {
    return absl::StrFormat("%04d-%02u-01 00:00:00+00", static_cast<int>(ym.year()),
                           static_cast<unsigned>(ym.month()));
  }
  std::string Name() const {
    return absl::StrFormat("samples_%04d_%02u", static_cast<int>(ym.year()), static_cast<unsigned>(ym.month()));
  }
  Month Next() const { return Month{ym + std::chrono::months(1)}; }
};

Month MonthOf(TimePoint t) {
  const std::chrono::year_month_day day{std::chrono::floor<std::chrono::days>(t)};
  return Month{day.year() / day.month()};
}

// Creates the partition of `month`, moving rows of it out of the default
// partition when some landed there. Returns false when it existed.
bool CreatePartition(pqxx::work& txn, const Month& month) {
  // A second coordinator making the same month waits here, then finds it.
  txn.exec_params("SELECT pg_advisory_xact_lock($1)", kPartitionLockKey);
  if (!txn.exec_params1("SELECT to_regclass($1) IS NULL", month.Name())[0].as<bool>()) return false;
  // Literals of digits this code formatted: nothing to escape.
  const std::string lo = absl::StrCat("'", month.Start(), "'"), hi = absl::StrCat("'", month.Next().Start(), "'");
  const std::string range = absl::StrCat(" FROM (", lo, ") TO (", hi, ")");
  const std::string in_range =
      absl::StrCat(" WHERE received_at >= ", lo, "::timestamptz AND received_at < ", hi, "::timestamptz");
  const std::string create =
      absl::StrCat("CREATE TABLE ", txn.quote_name(month.Name()), " PARTITION OF samples FOR VALUES", range);
  if (txn.exec(absl::StrCat("SELECT 1 FROM samples_default", in_range, " LIMIT 1")).empty()) {
    txn.exec(create);
    return true;
  }
  // Made too late: the month's rows sit in the default partition, and
  // PostgreSQL refuses a partition that the default holds rows of.
  txn.exec("ALTER TABLE samples DETACH PARTITION samples_default");
  txn.exec(create);
  txn.exec(absl::StrCat("INSERT INTO samples SELECT * FROM samples_default", in_range));
  txn.exec(absl::StrCat("DELETE FROM samples_default", in_range));
  txn.exec("ALTER TABLE samples ATTACH PARTITION samples_default DEFAULT");
  return true;
}

// Removes up to kExpireChunk runs that `rule` matches; returns the runs and
// sample rows removed (0 runs: none left).
std::pair<uint64_t, uint64_t> ExpireChunk(pqxx::work& txn, const RetentionRule& rule) {
  const int64_t cutoff = rule.finished_before ? ToMicros(*rule.finished_before) : 0;
  Json ids = Json::array();
  for (const auto& row : txn.exec_params(
           absl::StrCat("SELECT id::text FROM runs WHERE status <> 'running' AND ($1 = '' OR branch = $1) "
                        "AND (NOT $2 OR finished_at < ",
                        TimestampFromMicros(3), ") ORDER BY finished_at LIMIT $4 FOR UPDATE SKIP LOCKED"),
           rule.branch, rule.finished_before.has_value(), cutoff, kExpireChunk)) {
    ids.push_back(row[0].as<std::string>());
  }
  if (ids.empty()) return {0, 0};
  const std::string id_list = ids.dump();
  constexpr const char* kIds = "(SELECT (jsonb_array_elements_text($1::jsonb))::uuid)";
  // Every partition is searched, not only those of the runs' time span: a
  // probe of the run_id index of a partition without them costs one
  // descent, and no row may be left behind.
  const pqxx::result samples =
      txn.exec_params(absl::StrCat("DELETE FROM samples WHERE run_id IN ", kIds), id_list);
  // Cases, batches, summaries and gate reports go with the run (ON DELETE CASCADE).
  const pqxx::result runs = txn.exec_params(absl::StrCat("DELETE FROM runs WHERE id IN ", kIds), id_list);
  return {runs.affected_rows(), samples.affected_rows()};
}

// Drops the monthly partitions of samples for months over more than a day
// ago that hold no row; returns how many.
uint32_t DropEmptyPartitions(pqxx::work& txn, TimePoint now) {
  const std::string oldest_kept = MonthOf(now - std::chrono::hours(24)).Name();
  uint32_t dropped = 0;
  for (const auto& row : txn.exec(
           "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
           "WHERE i.inhparent = 'samples'::regclass AND c.relname ~ '^samples_[0-9]{4}_[0-9]{2}$' "
           "ORDER BY c.relname")) {
    const std::string name = row[0].as<std::string>();
    if (name >= oldest_kept) break;  // names sort by month
    const std::string quoted = txn.quote_name(name);
    if (!txn.exec(absl::StrCat("SELECT 1 FROM ", quoted, " LIMIT 1")).empty()) continue;
    txn.exec(absl::StrCat("DROP TABLE ", quoted));
    ++dropped;
  }
  return dropped;
}

}  // namespace

absl::StatusOr<uint32_t> Store::EnsurePartitions(TimePoint now, uint32_t months_ahead) {
  uint32_t created = 0;
  Month month = MonthOf(now);
  for (uint32_t i = 0; i <= months_ahead; ++i, month = month.Next()) {
    absl::StatusOr<bool> made =
        pool_->Run(absl::StrCat("creating partition ", month.Name()), [&](pqxx::connection& c) -> absl::StatusOr<bool> {
          pqxx::work txn(c);
          const bool made = CreatePartition(txn, month);
          txn.commit();
          return made;
        });
    if (!made.ok()) return made.status();
    if (*made) ++created;
  }
  return created;
}

absl::StatusOr<RetentionOutcome> Store::ExpireRuns(const RetentionRule& rule) {
  if (!rule.finished_before && rule.branch.empty()) {
    return absl::InvalidArgumentError("a retention rule needs an age or a branch (or both)");
  }
  RetentionOutcome out;
  for (;;) {
    auto removed = pool_->Run("expiring runs", [&](pqxx::connection& c) -> absl::StatusOr<std::pair<uint64_t, uint64_t>> {
      pqxx::work txn(c);
      const auto counts = ExpireChunk(txn, rule);
      txn.commit();
      return counts;
    });
    if (!removed.ok()) return removed.status();
    if (removed->first == 0) break;
    out.runs += removed->first;
    out.samples += removed->second;
  }
  auto dropped = pool_->Run("dropping empty partitions", [&](pqxx::connection& c) -> absl::StatusOr<uint32_t> {
    pqxx::work txn(c);
    const uint32_t n = DropEmptyPartitions(txn, std::chrono::system_clock::now());
    txn.commit();
    return n;
  });
  if (!dropped.ok()) return dropped.status();
  out.partitions_dropped = *dropped;
  return out;
}

absl::StatusOr<int64_t> Store::SaveGateReport(const std::string& candidate_run_id,
                                              const std::string& baseline_branch,
                                              const std::string& outcome,
                                              const std::string& report_json) {
  auto run_id = NormalizeRunId(candidate_run_id);
  if (!run_id.ok()) return run_id.status();
  if (!Json::accept(report_json)) {
    return absl::InvalidArgumentError("the gate report is not valid JSON");
  }
  return pool_->Run("saving a gate report", [&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::work txn(c);
    if (txn.exec_params("SELECT 1 FROM runs WHERE id = $1", *run_id).empty()) {
      return absl::NotFoundError(absl::StrCat("candidate run ", *run_id, " does not exist"));
    }
    const int64_t id =
        txn.exec_params1(
               "INSERT INTO gate_reports (candidate_run_id, baseline_branch, outcome, report) "
               "VALUES ($1, $2, $3, $4::jsonb) RETURNING id",
               *run_id, baseline_branch, outcome, report_json)[0]
            .as<int64_t>();
    txn.commit();
    return id;
  });
}

absl::StatusOr<std::string> Store::GetGateReport(int64_t report_id) {
  return pool_->Run(
      "reading a gate report", [&](pqxx::connection& c) -> absl::StatusOr<std::string> {
        pqxx::read_transaction txn(c);
        pqxx::result r =
            txn.exec_params("SELECT report::text FROM gate_reports WHERE id = $1", report_id);
        if (r.empty())
          return absl::NotFoundError(absl::StrCat("gate report ", report_id, " does not exist"));
        return r[0][0].as<std::string>();
      });
}

absl::Status Store::WithConnection(const std::string& what,
                                   const std::function<absl::Status(pqxx::connection&)>& fn) {
  return pool_->Run(what, fn);
}

pqxx::result Store::SeriesDefinition(pqxx::transaction_base& txn, const std::string& key,
                                     const std::string& name) {
  constexpr const char* kDefinitions =
      "SELECT m.id, m.unit, m.direction FROM metrics m JOIN benchmarks b ON b.id = m.benchmark_id "
      "WHERE b.key = $1 AND m.name = $2 ";
  pqxx::result all = txn.exec_params(kDefinitions, key, name);
  if (all.size() <= 1) return all;
  // Several definitions (units) under one name: the newest complete run's.
  return txn.exec_params(
      absl::StrCat(kDefinitions,
                   "ORDER BY (SELECT max(r.finished_at) FROM summaries s JOIN runs r ON r.id = s.run_id "
                   "WHERE s.metric_id = m.id AND r.status = 'complete') DESC NULLS LAST, m.id LIMIT 1"),
      key, name);
}

absl::StatusOr<std::vector<std::string>> Store::ExpireSilentRuns(double max_silence_s) {
  auto idle = pool_->Run("finding silent runs", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<std::string>> {
    pqxx::read_transaction txn(c);
    std::vector<std::string> ids;
    for (const auto& row : txn.exec_params(
             "SELECT r.id::text FROM runs r WHERE r.status = 'running' "
             "AND r.heard_at < now() - make_interval(secs => $1::float8) AND NOT EXISTS (SELECT 1 FROM batches b "
             "WHERE b.run_id = r.id AND b.received_at >= now() - make_interval(secs => $1::float8)) ORDER BY r.heard_at",
             max_silence_s)) {
      ids.push_back(row[0].as<std::string>());
    }
    return ids;
  });
  if (!idle.ok()) return idle.status();
  std::vector<std::string> expired;
  const std::string reason = absl::StrFormat(
      "expired: no word from its agent for %.0f s (the agent stopped; `perfgate-agent replay` of its spool "
      "cannot add to a closed run)", max_silence_s);
  for (const std::string& id : *idle) {
    auto closed = CloseRun(id, RunStatus::kFailed, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                           reason, {});
    if (closed.ok()) {
      expired.push_back(id);
    } else if (closed.status().code() != absl::StatusCode::kFailedPrecondition) {
      return closed.status();  // FAILED_PRECONDITION: closed meanwhile by its agent
    }
  }
  return expired;
}

}  // namespace perfgate::coordinator
