#include "coordinator/store/catalog.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sql.h"
#include "gate/fleet.h"

namespace perfgate::coordinator::store {
namespace {

std::vector<std::string> Column(pqxx::transaction_base& txn, const char* sql) {
  std::vector<std::string> out;
  for (const auto& row : txn.exec(sql)) out.push_back(row[0].as<std::string>());
  return out;
}

}  // namespace

absl::StatusOr<Catalog> CatalogRepository::GetCatalog() {
  Catalog cat;
  absl::Status s = db_.Run("reading the catalog", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec(
             "SELECT b.key, m.name, m.unit FROM metrics m JOIN benchmarks b ON b.id = m.benchmark_id "
             "ORDER BY b.key COLLATE \"C\", m.name COLLATE \"C\"")) {
      cat.metrics.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>()});
    }
    cat.skus = Column(txn, "SELECT DISTINCT sku FROM runs ORDER BY 1");
    cat.branches = Column(txn, "SELECT DISTINCT branch FROM runs ORDER BY 1");
    cat.nodes = Column(txn, "SELECT DISTINCT node FROM runs WHERE node <> '' ORDER BY 1");
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return cat;
}

absl::StatusOr<std::vector<Sweep>> CatalogRepository::ListSweeps(const std::string& sku) {
  std::vector<Sweep> out;
  absl::Status s = db_.Run("listing sweeps", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec_params(
             absl::StrCat(
                 "SELECT sweep, sku, count(*), count(DISTINCT node), ", MicrosFromTimestamp("max(finished_at)"),
                 " FROM ("
                 "SELECT coalesce(nullif(details->>'slurm_array_job_id', ''), "
                 "nullif(details->>'slurm_job_id', ''), nullif(ci_job, '')) AS sweep, sku, node, "
                 "finished_at FROM runs WHERE status = 'complete' AND ($1 = '' OR sku = $1)) x "
                 "WHERE sweep IS NOT NULL GROUP BY sweep, sku HAVING count(DISTINCT node) >= ",
                 gate::kMinFleetNodes, " ORDER BY max(finished_at) DESC LIMIT 100"),
             sku)) {
      Sweep w;
      w.sweep = row[0].as<std::string>();
      w.sku = row[1].as<std::string>();
      w.runs = row[2].as<uint32_t>();
      w.nodes = row[3].as<uint32_t>();
      w.finished_at = FromMicros(row[4].as<int64_t>());
      out.push_back(std::move(w));
    }
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return out;
}

absl::StatusOr<int64_t> CatalogRepository::CountOpenRuns() {
  int64_t n = 0;
  absl::Status s = db_.Run("counting open runs", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    n = txn.exec("SELECT count(*) FROM runs WHERE status = 'running'")[0][0].as<int64_t>();
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return n;
}

absl::StatusOr<std::optional<ReplicaLag>> CatalogRepository::StandbyLag() {
  return db_.Run("reading the standby's lag", [&](pqxx::connection& c) -> absl::StatusOr<std::optional<ReplicaLag>> {
    pqxx::read_transaction txn(c);
    // Caught up (all received WAL replayed): no lag, whatever the age of
    // the last transaction on a quiet primary.
    const pqxx::row row = txn.exec1(absl::StrCat(
        "SELECT pg_is_in_recovery(), "
        "CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() THEN 0 "
        "ELSE greatest(0, extract(epoch FROM now() - pg_last_xact_replay_timestamp())) END::float8, ",
        MicrosFromTimestamp("CASE WHEN pg_last_wal_receive_lsn() IS NOT DISTINCT FROM pg_last_wal_replay_lsn() "
                            "THEN now() ELSE coalesce(pg_last_xact_replay_timestamp(), now()) END")));
    if (!row[0].as<bool>()) return std::optional<ReplicaLag>();
    ReplicaLag lag;
    lag.seconds = row[1].is_null() ? 0 : row[1].as<double>();
    lag.as_of = FromMicros(row[2].as<int64_t>());
    return std::optional<ReplicaLag>(lag);
  });
}

}  // namespace perfgate::coordinator::store
