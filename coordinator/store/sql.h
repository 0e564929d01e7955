// What the repositories of this folder share when they talk SQL: limits,
// time conversions, the run columns and their reading, statements prepared
// on every connection, and the parsing of values PostgreSQL prints.
// Internal to coordinator/store/ (it includes libpqxx).
#pragma once

#include <pqxx/pqxx>

#include <bit>
#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/identity.h"
#include "common/run_types.h"
#include "coordinator/store/records.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator::store {

using Json = nlohmann::json;

/// The ids a batch's case is stored under: its benchmark's, and its metrics'
/// in the case's metric order.
using CaseIds = std::pair<int64_t, std::vector<int64_t>>;

/// SQL expression turning microseconds since the epoch (bigint parameter
/// number `param`) into a timestamptz without going through floating point.
std::string TimestampFromMicros(int param);
/// The reverse: exact, since extract() returns numeric.
std::string MicrosFromTimestamp(const std::string& column);
/// Microseconds since the epoch.
int64_t ToMicros(TimePoint t);
/// The time point of microseconds since the epoch.
TimePoint FromMicros(int64_t us);
/// The field's value, NaN for NULL.
double NullableDouble(const pqxx::field& f);
/// The first line of a (libpqxx) message, trimmed.
std::string FirstLine(absl::string_view text);

/// The columns RowToRun() reads, in order, from runs r joined (kRunJoins)
/// with agents a and environments e.
const std::string& RunColumns();
inline constexpr const char* kRunJoins =
    " FROM runs r JOIN agents a ON a.id = r.agent_id JOIN environments e ON e.id = "
    "r.environment_id ";
/// Run details as stored (a JSON object): strings as they are, anything
/// else as its JSON text.
std::map<std::string, std::string> ParseDetails(const std::string& json);
/// A run read with RunColumns().
RunRecord RowToRun(const pqxx::row& row);

/// Runs a statement prepared on every pooled connection (database.cc).
template <typename... Args>
pqxx::result Prepared(pqxx::transaction_base& txn, const char* name, Args&&... args) {
  return txn.exec_prepared(name, std::forward<Args>(args)...);
}

/// Looks up the id of a row by its unique key, running insert first when it is
/// absent. Reads first so that the common case (it exists) is one statement
/// and writes no tuple.
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

/// The id of an environment, stored once per content hash.
int64_t EnvironmentId(pqxx::work& txn, const Environment& environment);

/// The shortest text that reads back as v (std::to_chars), for a double in
/// a statement's JSON: libpqxx 6 would print it through a stream at 17 digits.
std::string DoubleText(double v);

/// The definition a series of metric `name` of benchmark `key` follows:
/// rows (id, unit, direction), empty when none is stored. A metric is its
/// name, unit and direction together (migration 0006); when several
/// definitions share a name, the one of the newest complete run.
pqxx::result SeriesDefinition(pqxx::transaction_base& txn, const std::string& key,
                              const std::string& name);

/// The bounds of a run's received_at, as timestamptz text parameters that
/// let PostgreSQL read only the partitions the run can be in (see migration
/// 0007): [opened_at, finished_at], a day wider on each side for a server
/// clock that stepped; unbounded for a run opened before opened_at existed
/// or still running.
inline constexpr const char* kRunBounds =
    "coalesce(opened_at - interval '1 day', '-infinity')::text, "
    "coalesce(finished_at + interval '1 day', 'infinity')::text";

/// Parses a number PostgreSQL printed (integer or float8 text), exactly.
template <typename T>
T ParseNumber(const pqxx::field& f) {
  T v{};
  const char* begin = f.c_str();
  std::from_chars(begin, begin + f.size(), v);
  return v;
}

/// Appends the numbers of a float8[] PostgreSQL printed ("{1.5,2,...}") to out.
void ParseFloatArray(const pqxx::field& f, std::vector<double>& out);

/// The big-endian numbers of type T (double for float8send, int32_t for
/// int4send) that one bytea holds joined, in order, as doubles.
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

/// The values of one aggregation's values and their sample indexes (exact
/// as doubles: integers below 2^31), sorted by sample index.
std::vector<double> InSampleOrder(std::vector<double> values, std::vector<double> idx);

}  // namespace perfgate::coordinator::store
