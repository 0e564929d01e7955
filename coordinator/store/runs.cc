#include "coordinator/store/runs.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/row_limits.h"
#include "common/status_macros.h"
#include "coordinator/store/ingest_checks.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {
absl::StatusOr<int64_t> RunRepository::RegisterAgent(const std::string& name, const std::string& hostname,
                                             const std::string& version) {
  if (name.empty()) return absl::InvalidArgumentError("agent name is empty");
  return db_.Run("registering an agent", [&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
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

absl::StatusOr<bool> RunRepository::OpenRun(const RunMeta& meta) {
  auto run_id = NormalizeRunId(meta.run_id);
  PERFGATE_RETURN_IF_ERROR(run_id);
  if (meta.agent_name.empty()) return absl::InvalidArgumentError("run has no agent name");
  if (meta.environment.sku.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("run ", *run_id, " has no SKU in its environment"));
  }
  return db_.Run("opening a run", [&](pqxx::connection& c) -> absl::StatusOr<bool> {
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
      RunStatus stored = RunStatus::kUnspecified;
      const bool running = ParseRunStatus(status, &stored) && stored == RunStatus::kRunning;
      if (running) {
        pqxx::result row = txn.exec_params(
            absl::StrCat("UPDATE runs SET heard_at = now() WHERE id = $1 AND status = 'running' RETURNING ",
                          ingest::ReopenColumns()),
            *run_id);
        if (!row.empty()) {
          PERFGATE_RETURN_IF_ERROR(ingest::CheckReopen(row[0], agent_id, meta));
          txn.commit();
          return true;
        }  // closed meanwhile
      }
      return absl::AlreadyExistsError(absl::StrCat("run ", *run_id, " already finished (", running ? "closed meanwhile" : status,
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

absl::StatusOr<RunRecord> RunRepository::GetRun(const std::string& raw_run_id) {
  auto run_id = NormalizeRunId(raw_run_id);
  PERFGATE_RETURN_IF_ERROR(run_id);
  return db_.Run("reading a run", [&](pqxx::connection& c) -> absl::StatusOr<RunRecord> {
    pqxx::read_transaction txn(c);
    pqxx::result r = txn.exec_params(
        absl::StrCat("SELECT ", RunColumns(), kRunJoins, "WHERE r.id = $1"), *run_id);
    if (r.empty()) return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
    return RowToRun(r[0]);
  });
}

absl::StatusOr<std::vector<RunRecord>> RunRepository::ListRuns(const std::string& branch,
                                                       const std::string& sku, uint32_t limit) {
  return db_.Run(
      "listing runs", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<RunRecord>> {
        pqxx::read_transaction txn(c);
        std::vector<RunRecord> runs;
        for (const auto& row : txn.exec_params(
                 absl::StrCat("SELECT ", RunColumns(), kRunJoins,
                              "WHERE ($1 = '' OR r.branch = $1) AND ($2 = '' OR r.sku = $2) "
                              "ORDER BY r.started_at DESC, r.id LIMIT $3"),
                 branch, sku, static_cast<int64_t>(ClampRows(kRunRows, limit)))) {
          runs.push_back(RowToRun(row));
        }
        return runs;
      });
}

absl::StatusOr<std::vector<RunRecord>> RunRepository::FindBaselineRuns(const BaselineQuery& q) {
  if (q.branch.empty() || q.sku.empty()) {
    return absl::InvalidArgumentError("a baseline query needs a branch and a SKU");
  }
  const std::string exclude = absl::AsciiStrToLower(q.exclude_run_id);
  return db_.Run(
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
                 static_cast<int64_t>(ClampRows(kBaselineRunRows, q.limit)))) {
          runs.push_back(RowToRun(row));
        }
        return runs;
      });
}

absl::StatusOr<std::vector<RunRecord>> RunRepository::FindSweepRuns(const std::string& sku,
                                                            const std::string& sweep) {
  if (sku.empty() || sweep.empty()) return absl::InvalidArgumentError("a sweep query needs a SKU and a sweep id");
  return db_.Run(
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

}  // namespace perfgate::coordinator::store
