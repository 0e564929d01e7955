// A batch's samples into the samples table by COPY in PostgreSQL's binary
// format, on the connection of the transaction that stores the batch.
// Internal to coordinator/store/ (it includes libpqxx).
#pragma once

#include <pqxx/pqxx>

#include <string>
#include <vector>

#include "common/run_types.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {

/// Writes the batch's samples (one row per sample and metric) with `COPY
/// samples ... FROM STDIN (FORMAT binary)` inside `txn`, streamed in
/// chunks: PostgreSQL takes each number as its bytes instead of parsing
/// text. `run_id` is a canonical UUID; every value is finite and every
/// sample has one value per metric (checked before). A refusal is thrown
/// as pqxx::sql_error with its SQLSTATE, a lost connection as
/// pqxx::broken_connection, as libpqxx's own calls throw them.
void CopySamples(pqxx::dbtransaction& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                 const std::vector<CaseIds>& ids);

}  // namespace perfgate::coordinator::store
