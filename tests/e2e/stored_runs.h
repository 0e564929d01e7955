// What the end-to-end tests check after agents ran through faults: a run
// in the database holds exactly what its agent's result file holds; and the
// streaming-replication standby those tests fail over to.
#pragma once

#include <memory>
#include <pqxx/pqxx>
#include <string>

#include "absl/status/statusor.h"
#include "tests/support/postgres.h"

namespace perfgate::testing {

/// EXPECTs that run `run_id` is complete and holds, per case of the result
/// file at `results_path`, every sample value once (rows, distinct metric
/// and index pairs) with the same sum, and no other case.
void ExpectRunStoredAsFiled(pqxx::transaction_base& txn, const std::string& run_id, const std::string& results_path);

/// A started standby of the test database at `conninfo` on `primary`.
struct Standby {
  std::unique_ptr<PostgresServer> server;
  std::string dbname;  // the test database's name, the same on both
  /// Names both hosts with target_session_attrs=read-write: libpq connects
  /// to whichever takes writes, so a coordinator follows a promotion.
  std::string both;
};

/// StartStandby(primary) and the names to reach the test database on it.
absl::StatusOr<Standby> StartStandbyOf(const PostgresServer& primary, const std::string& conninfo);

}  // namespace perfgate::testing
