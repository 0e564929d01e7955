#include "coordinator/store.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "common/identity.h"
#include "common/stats.h"
#include "coordinator/ingest_checks.h"
#include "coordinator/migrations.h"
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

// Shortest text that parses back to the same double.
std::string DoubleText(double v) { return absl::StrFormat("%.17g", v); }

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
  const Json details = Json::parse(row[16].as<std::string>());
  for (const auto& [k, v] : details.items()) {
    m.details[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
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
            absl::StrCat("UPDATE runs SET opened_at = now() WHERE id = $1 AND status = 'running' RETURNING ",
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
            "parent_commits, trigger, ci_job, node, started_at, details) VALUES ($1, $2, $3, $4, "
            "$5, $6, $7, ARRAY(SELECT jsonb_array_elements_text($8::jsonb)), $9, $10, $11, "
            "CASE WHEN $12::bigint = 0 THEN now() ELSE ",
            TimestampFromMicros(12), " END, $13::jsonb) ON CONFLICT (id) DO NOTHING RETURNING 1"),
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

// The id of metric `m` of benchmark `bench_id` (key `key`), registered when
// new; an error when it is stored with another unit or direction.
absl::StatusOr<int64_t> MetricId(pqxx::work& txn, const std::string& run_id, int64_t bench_id,
                                 const std::string& key, const MetricSpec& m) {
  // A metric is its name, unit and direction together (migration 0006): a
  // definition nobody used before is a new row, never a conflict.
  const std::string direction = ToString(m.direction);
  const char* kSelect =
      "SELECT id FROM metrics WHERE benchmark_id = $1 AND name = $2 AND unit = $3 AND direction = $4";
  pqxx::result r = txn.exec_params(kSelect, bench_id, m.name, m.unit, direction);
  if (r.empty()) {
    txn.exec_params(
        "INSERT INTO metrics (benchmark_id, name, unit, direction) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT (benchmark_id, name, unit, direction) DO NOTHING",
        bench_id, m.name, m.unit, direction);
    r = txn.exec_params(kSelect, bench_id, m.name, m.unit, direction);
  }
  const auto id = r.at(0)[0].as<int64_t>();
  if (absl::Status s = ingest::CheckOneDefinition(txn, run_id, bench_id, id, key, m); !s.ok()) return s;
  return id;
}

// Registers one case of a batch: its benchmark and metrics when new, and the
// run's row for the case (with how it ended, once the batch says so).
absl::StatusOr<CaseIds> StoreCase(pqxx::work& txn, const std::string& run_id, const CaseResult& cr) {
  const std::string key = cr.benchmark.Key();
  const int64_t bench_id =
      LookupOrInsert(txn, "SELECT id FROM benchmarks WHERE key = $1", key, [&] {
        txn.exec_params(
            "INSERT INTO benchmarks (key, suite, name, params) VALUES ($1, $2, $3, $4::jsonb) "
            "ON CONFLICT (key) DO NOTHING",
            key, cr.benchmark.suite, cr.benchmark.name, Json(cr.benchmark.params).dump());
      });
  std::vector<int64_t> metric_ids;
  for (const MetricSpec& m : cr.metrics) {
    auto id = MetricId(txn, run_id, bench_id, key, m);
    if (!id.ok()) return id.status();
    metric_ids.push_back(*id);
  }
  if (!metric_ids.empty()) {
    if (absl::Status s = ingest::CheckNewIndices(txn, run_id, metric_ids.front(), cr); !s.ok()) return s;
  }
  if (cr.status == CaseStatus::kUnspecified) {
    txn.exec_params(
        "INSERT INTO run_cases (run_id, benchmark_id) VALUES ($1, $2) "
        "ON CONFLICT (run_id, benchmark_id) DO NOTHING",
        run_id, bench_id);
  } else {
    txn.exec_params(
        "INSERT INTO run_cases (run_id, benchmark_id, status, reason, noise) "
        "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (run_id, benchmark_id) DO UPDATE "
        "SET status = excluded.status, reason = excluded.reason, noise = excluded.noise",
        run_id, bench_id, std::string(ToString(cr.status)), cr.reason,
        std::isfinite(cr.noise) ? cr.noise : 0.0);
  }
  return CaseIds(bench_id, std::move(metric_ids));
}

// The batch's samples, one row per sample and metric, through COPY.
void CopySamples(pqxx::work& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                 const std::vector<CaseIds>& ids) {
  pqxx::stream_to copy(txn, "samples",
                       std::vector<std::string>{"run_id", "benchmark_id", "metric_id", "idx",
                                                "value", "throttled"});
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& [bench_id, metric_ids] = ids[ci];
    for (const Sample& s : cases[ci].samples) {
      for (size_t mi = 0; mi < metric_ids.size(); ++mi) {
        copy << std::make_tuple(run_id, bench_id, metric_ids[mi], static_cast<int64_t>(s.index),
                                DoubleText(s.values[mi]), s.throttled);
      }
    }
  }
  copy.complete();
}

// The cases and samples a run holds so far.
CloseOutcome StoredCounts(pqxx::work& txn, const std::string& run_id) {
  CloseOutcome out;
  out.cases = txn.exec_params1("SELECT count(*) FROM run_cases WHERE run_id = $1", run_id)[0]
                  .as<uint32_t>();
  out.samples =
      txn.exec_params1(
             "SELECT coalesce(sum(sample_count), 0)::bigint FROM batches WHERE run_id = $1",
             run_id)[0]
          .as<uint64_t>();
  return out;
}

// Every batch the agent says it sent must be here, or the summaries would
// silently leave samples out.
absl::Status CheckBatchesArrived(pqxx::work& txn, const std::string& run_id, uint64_t last_sequence) {
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

// One summary row (JSON) per metric the run reports, over its unthrottled
// samples, with how many throttled ones were left out.
Json SummaryRows(pqxx::work& txn, const std::string& run_id) {
  // Per metric: unthrottled values, and how many throttled ones were left out.
  std::map<int64_t, std::pair<std::vector<double>, uint32_t>> values;
  for (const auto& row : txn.exec_params("SELECT metric_id FROM summaries WHERE run_id = $1", run_id)) {
    values[row[0].as<int64_t>()];
  }
  for (const auto& row : txn.exec_params(
           "SELECT metric_id, value, throttled FROM samples WHERE run_id = $1", run_id)) {
    auto& [unthrottled, throttled] = values[row[0].as<int64_t>()];
    if (row[2].as<bool>()) {
      ++throttled;
    } else {
      unthrottled.push_back(row[1].as<double>());
    }
  }
  Json rows = Json::array();
  for (const auto& [metric_id, v] : values) {
    const stats::Summary s = stats::Summarize(v.first);
    // JSON has no NaN: statistics of an empty set are stored as NULL.
    auto num = [&](double x) { return std::isfinite(x) && s.n > 0 ? Json(x) : Json(nullptr); };
    rows.push_back({{"metric_id", metric_id},
                    {"n", s.n},
                    {"n_throttled", v.second},
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
                    {"median_ci_high", num(s.median_ci_high)}});
  }
  return rows;
}

// Writes the summary rows over the run's placeholders (or earlier ones).
void WriteSummaries(pqxx::work& txn, const std::string& run_id, const Json& rows) {
  txn.exec_params(
      "INSERT INTO summaries (run_id, metric_id, n, n_throttled, median, mean, stdev, min, max, "
      "noise, mad, p5, p95, median_ci_low, median_ci_high) "
      "SELECT $1, (x->>'metric_id')::bigint, (x->>'n')::int, (x->>'n_throttled')::int, "
      "(x->>'median')::float8, (x->>'mean')::float8, (x->>'stdev')::float8, "
      "(x->>'min')::float8, (x->>'max')::float8, (x->>'noise')::float8, "
      "(x->>'mad')::float8, (x->>'p5')::float8, (x->>'p95')::float8, "
      "(x->>'median_ci_low')::float8, (x->>'median_ci_high')::float8 "
      "FROM jsonb_array_elements($2::jsonb) x "
      "ON CONFLICT (run_id, metric_id) DO UPDATE SET n = excluded.n, "
      "n_throttled = excluded.n_throttled, median = excluded.median, mean = excluded.mean, "
      "stdev = excluded.stdev, min = excluded.min, max = excluded.max, noise = excluded.noise, "
      "mad = excluded.mad, p5 = excluded.p5, p95 = excluded.p95, "
      "median_ci_low = excluded.median_ci_low, median_ci_high = excluded.median_ci_high",
      run_id, rows.dump());
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
    pqxx::result run = txn.exec_params("SELECT status FROM runs WHERE id = $1 FOR SHARE", *run_id);
    if (run.empty()) {
      return absl::NotFoundError(
          absl::StrCat("run ", *run_id, " does not exist; call OpenRun before sending results"));
    }
    const std::string status = run[0][0].as<std::string>();
    const auto seq = static_cast<int64_t>(sequence);
    BatchOutcome outcome;
    if (status != "running") {
      // A resend of a batch stored before the run closed is still a duplicate.
      if (!txn.exec_params("SELECT 1 FROM batches WHERE run_id = $1 AND sequence = $2", *run_id,
                           seq)
               .empty()) {
        if (absl::Status s = ingest::CheckResentBatch(txn, *run_id, seq, digest); !s.ok()) return s;
        outcome.duplicate = true;
        return outcome;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "run ", *run_id, " is ", status, "; results are accepted only while a run is running"));
    }
    if (txn.exec_params("INSERT INTO batches (run_id, sequence, sample_count, digest) VALUES ($1, $2, $3, $4) "
                        "ON CONFLICT (run_id, sequence) DO NOTHING RETURNING 1",
                        *run_id, seq, static_cast<int64_t>(sample_count), digest)
            .empty()) {
      if (absl::Status s = ingest::CheckResentBatch(txn, *run_id, seq, digest); !s.ok()) return s;
      outcome.duplicate = true;
      txn.commit();
      return outcome;
    }

    std::vector<CaseIds> ids;
    Json summary_metrics = Json::array();
    for (const CaseResult& cr : cases) {
      auto case_ids = StoreCase(txn, *run_id, cr);
      if (!case_ids.ok()) return case_ids.status();
      for (int64_t metric_id : case_ids->second) summary_metrics.push_back(metric_id);
      ids.push_back(std::move(*case_ids));
    }
    // A summary row per metric the run reports, so CloseRun also summarizes
    // a case whose samples never came (n = 0).
    txn.exec_params(
        "INSERT INTO summaries (run_id, metric_id) "
        "SELECT $1, m::bigint FROM jsonb_array_elements_text($2::jsonb) m "
        "ON CONFLICT (run_id, metric_id) DO NOTHING",
        *run_id, summary_metrics.dump());

    if (sample_count > 0) CopySamples(txn, *run_id, cases, ids);
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
  return pool_->Run("closing a run", [&](pqxx::connection& c) -> absl::StatusOr<CloseOutcome> {
    pqxx::work txn(c);
    pqxx::result run = txn.exec_params("SELECT status FROM runs WHERE id = $1 FOR UPDATE", *run_id);
    if (run.empty()) return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
    const std::string current = run[0][0].as<std::string>();
    if (current != "running") {
      if (current == new_status) return StoredCounts(txn, *run_id);  // a resent CloseRun
      return absl::FailedPreconditionError(absl::StrCat("run ", *run_id, " was already closed as ",
                                                        current, "; it cannot be closed again as ",
                                                        new_status));
    }
    if (absl::Status s = ingest::CheckCloseAgainstStored(txn, *run_id, status, last_sequence); !s.ok()) return s;
    // A failed run is closed with what it has, a missing batch included.
    if (status == RunStatus::kComplete) {
      if (absl::Status s = CheckBatchesArrived(txn, *run_id, last_sequence); !s.ok()) return s;
    }
    WriteSummaries(txn, *run_id, SummaryRows(txn, *run_id));
    txn.exec_params(
        "UPDATE runs SET status = $2, finished_at = now(), failure_reason = $3, "
        "invalid_reasons = ARRAY(SELECT jsonb_array_elements_text($4::jsonb)) WHERE id = $1",
        *run_id, new_status, reason, Json(invalid_reasons).dump());
    CloseOutcome out = StoredCounts(txn, *run_id);
    txn.commit();
    return out;
  });
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

absl::StatusOr<std::vector<MetricSummary>> Store::GetSummaries(const std::string& raw_run_id) {
  auto run_id = NormalizeRunId(raw_run_id);
  if (!run_id.ok()) return run_id.status();
  return pool_->Run(
      "reading summaries", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<MetricSummary>> {
        pqxx::read_transaction txn(c);
        if (txn.exec_params("SELECT 1 FROM runs WHERE id = $1", *run_id).empty()) {
          return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
        }
        std::vector<MetricSummary> out;
        // COLLATE "C": byte order, the order std::string comparison gives, on any
        // database locale.
        for (const auto& row : txn.exec_params(
                 "SELECT b.key, m.name, m.unit, m.direction, s.n, s.n_throttled, s.median, s.mean, "
                 "s.stdev, s.min, s.max, s.noise, coalesce(rc.status, 'unspecified'), "
                 "coalesce(rc.reason, ''), s.mad, s.p5, s.p95, s.median_ci_low, s.median_ci_high "
                 "FROM summaries s JOIN metrics m ON m.id = s.metric_id "
                 "JOIN benchmarks b ON b.id = m.benchmark_id "
                 "LEFT JOIN run_cases rc ON rc.run_id = s.run_id AND rc.benchmark_id = b.id "
                 "WHERE s.run_id = $1 ORDER BY b.key COLLATE \"C\", m.name COLLATE \"C\"",
                 *run_id)) {
          MetricSummary ms;
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
          out.push_back(std::move(ms));
        }
        return out;
      });
}

absl::StatusOr<RunSamples> Store::GetSamples(const std::string& raw_run_id) {
  auto run_id = NormalizeRunId(raw_run_id);
  if (!run_id.ok()) return run_id.status();
  return pool_->Run("reading samples", [&](pqxx::connection& c) -> absl::StatusOr<RunSamples> {
    pqxx::read_transaction txn(c);
    if (txn.exec_params("SELECT 1 FROM runs WHERE id = $1", *run_id).empty()) {
      return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
    }
    RunSamples out;
    for (const auto& row : txn.exec_params(
             "SELECT b.key, m.name, s.value FROM samples s JOIN metrics m ON m.id = s.metric_id "
             "JOIN benchmarks b ON b.id = s.benchmark_id "
             "WHERE s.run_id = $1 AND NOT s.throttled ORDER BY s.metric_id, s.idx",
             *run_id)) {
      out[{row[0].as<std::string>(), row[1].as<std::string>()}].push_back(row[2].as<double>());
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
    pqxx::result m = txn.exec_params(
        "SELECT m.id, m.unit, m.direction FROM metrics m JOIN benchmarks b ON b.id = "
        "m.benchmark_id "
        "WHERE b.key = $1 AND m.name = $2 "
        // Several definitions (units) under one name: the newest complete run's.
        "ORDER BY (SELECT max(r.finished_at) FROM summaries s JOIN runs r ON r.id = s.run_id "
        "WHERE s.metric_id = m.id AND r.status = 'complete') DESC NULLS LAST, m.id LIMIT 1",
        benchmark_key, metric);
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

absl::StatusOr<std::vector<std::string>> Store::ExpireRuns(double max_silence_s) {
  auto idle = pool_->Run("finding silent runs", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<std::string>> {
    pqxx::read_transaction txn(c);
    std::vector<std::string> ids;
    for (const auto& row : txn.exec_params(
             "SELECT r.id::text FROM runs r WHERE r.status = 'running' "
             "AND r.opened_at < now() - make_interval(secs => $1::float8) AND NOT EXISTS (SELECT 1 FROM batches b "
             "WHERE b.run_id = r.id AND b.received_at >= now() - make_interval(secs => $1::float8)) ORDER BY r.opened_at",
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
