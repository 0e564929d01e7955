#include "coordinator/store/schema.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/migrations.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {
namespace {

// Key of the advisory lock that serialises migrations between coordinator
// replicas starting at the same time ("perfgate" in ASCII, truncated).
constexpr int64_t kMigrationLockKey = 0x7065726667617465;

}  // namespace

int SchemaRepository::LatestSchemaVersion() {
  int latest = 0;
  for (const Migration& m : Migrations()) latest = std::max(latest, m.version);
  return latest;
}

absl::Status SchemaRepository::Migrate() {
  // A database a newer release migrated: its tables may mean what this
  // binary does not know, so it touches nothing.
  PERFGATE_ASSIGN_OR_RETURN(const int found, SchemaVersion());
  if (found > LatestSchemaVersion()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the database's schema is at version ", found, ", newer than version ", LatestSchemaVersion(),
        ", the newest this perfgate-coordinator knows: a newer release migrated it. Run that release (or a "
        "newer one) against it; to go back to this one, restore a backup taken before the upgrade "
        "(docs/operations.md)"));
  }
  for (const Migration& m : Migrations()) {
    absl::Status s =
        db_.Run(absl::StrCat("applying migration ", m.name), [&](pqxx::connection& c) {
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
    PERFGATE_RETURN_IF_ERROR(s);
  }
  return absl::OkStatus();
}

absl::StatusOr<int> SchemaRepository::SchemaVersion() {
  return db_.Run("reading the schema version", [&](pqxx::connection& c) -> absl::StatusOr<int> {
    pqxx::read_transaction txn(c);
    if (txn.exec("SELECT to_regclass('schema_migrations') IS NULL")[0][0].as<bool>()) return 0;
    return txn.exec("SELECT coalesce(max(version), 0) FROM schema_migrations")[0][0].as<int>();
  });
}

}  // namespace perfgate::coordinator::store
