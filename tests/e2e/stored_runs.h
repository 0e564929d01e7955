// What the end-to-end tests check after agents ran through faults: a run
// in the database holds exactly what its agent's result file holds.
#pragma once

#include <pqxx/pqxx>
#include <string>

namespace perfgate::testing {

/// EXPECTs that run `run_id` is complete and holds, per case of the result
/// file at `results_path`, every sample value once (rows, distinct metric
/// and index pairs) with the same sum, and no other case.
void ExpectRunStoredAsFiled(pqxx::transaction_base& txn, const std::string& run_id, const std::string& results_path);

}  // namespace perfgate::testing
