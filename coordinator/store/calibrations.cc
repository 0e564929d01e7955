#include "coordinator/store/calibrations.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {

namespace {
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
    PERFGATE_RETURN_IF_ERROR(ValidateCalibrationEntry(e, absl::StrCat("calibration entry ", i)));
    // One statement upserts them all; PostgreSQL refuses to touch a row twice.
    if (!seen.insert({e.benchmark, e.metric}).second) {
      return absl::InvalidArgumentError(absl::StrCat("calibration of benchmark ", e.benchmark,
                                                     " metric '", e.metric, "' appears twice"));
    }
  }
  return absl::OkStatus();
}

}  // namespace
absl::StatusOr<uint32_t> CalibrationRepository::PutCalibration(const std::string& agent_name,
                                               const CalibrationSet& set) {
  PERFGATE_RETURN_IF_ERROR(ValidateCalibration(agent_name, set));
  Json rows = Json::array();
  for (const CalibrationEntry& e : set.entries) {
    rows.push_back({{"benchmark", e.benchmark},
                    {"metric", e.metric},
                    {"unit", e.unit},
                    {"direction", ToString(e.direction)},
                    {"spread", DoubleText(e.spread)},
                    {"processes", e.processes}});
  }
  return db_.Run("storing a calibration", [&](pqxx::connection& c) -> absl::StatusOr<uint32_t> {
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

absl::StatusOr<std::vector<CalibrationRecord>> CalibrationRepository::GetCalibrations(
    const std::string& sku, const std::string& node, const std::string& environment_hash,
    std::optional<std::chrono::seconds> max_age) {
  // The cutoff by this process's clock, the one gates and listings tell age by.
  const int64_t cutoff = max_age ? ToMicros(std::chrono::system_clock::now() - *max_age) : 0;
  return db_.Run(
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

}  // namespace perfgate::coordinator::store
