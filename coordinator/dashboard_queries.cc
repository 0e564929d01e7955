#include "coordinator/dashboard_queries.h"

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator {
namespace {

TimePoint FromMicros(int64_t us) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(us)));
}

std::vector<std::string> Column(pqxx::transaction_base& txn, const char* sql) {
  std::vector<std::string> out;
  for (const auto& row : txn.exec(sql)) out.push_back(row[0].as<std::string>());
  return out;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::vector<Verdict>>> GateVerdicts(
    Store& store, const std::vector<std::string>& run_ids) {
  std::map<std::string, std::vector<Verdict>> out;
  if (run_ids.empty()) return out;
  absl::Status s = store.WithConnection("reading gate verdicts", [&](pqxx::connection_base& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec_params(
             "SELECT candidate_run_id::text, id, outcome, baseline_branch, "
             "(extract(epoch from created_at) * 1000000)::bigint FROM gate_reports "
             "WHERE candidate_run_id::text IN (SELECT jsonb_array_elements_text($1::jsonb)) "
             "ORDER BY created_at DESC, id DESC",
             nlohmann::json(run_ids).dump())) {
      Verdict v;
      v.report_id = row[1].as<int64_t>();
      v.outcome = row[2].as<std::string>();
      v.baseline_branch = row[3].as<std::string>();
      v.created_at = FromMicros(row[4].as<int64_t>());
      out[row[0].as<std::string>()].push_back(std::move(v));
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<Catalog> GetCatalog(Store& store) {
  Catalog cat;
  absl::Status s = store.WithConnection("reading the catalog", [&](pqxx::connection_base& c) {
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
  if (!s.ok()) return s;
  return cat;
}

absl::StatusOr<std::vector<Sweep>> ListSweeps(Store& store, const std::string& sku) {
  std::vector<Sweep> out;
  absl::Status s = store.WithConnection("listing sweeps", [&](pqxx::connection_base& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec_params(
             absl::StrCat(
                 "SELECT sweep, sku, count(*), count(DISTINCT node), "
                 "(extract(epoch from max(finished_at)) * 1000000)::bigint FROM ("
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
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<gate::FleetRun>> LoadFleet(Store& store, const std::string& sku,
                                                      const std::string& sweep) {
  auto runs = store.FindSweepRuns(sku, sweep);
  if (!runs.ok()) return runs.status();
  if (runs->empty()) {
    return absl::NotFoundError(absl::StrCat("no complete run of SKU ", sku, " in sweep ", sweep));
  }
  std::vector<gate::FleetRun> fleet;
  for (const RunRecord& r : *runs) {
    auto sums = store.GetSummaries(r.meta.run_id);
    if (!sums.ok()) return sums.status();
    gate::FleetRun run;
    run.run_id = r.meta.run_id;
    // Runs ingested without a node are known by their agent, as in Query.Fleet.
    run.node = r.meta.node.empty() ? r.meta.agent_name : r.meta.node;
    run.finished_at = r.finished_at.value_or(r.meta.started_at);
    run.fields = r.meta.environment.fields;
    run.summaries = std::move(*sums);
    fleet.push_back(std::move(run));
  }
  return fleet;
}

absl::StatusOr<int64_t> CountOpenRuns(Store& store) {
  int64_t n = 0;
  absl::Status s = store.WithConnection("counting open runs", [&](pqxx::connection_base& c) {
    pqxx::read_transaction txn(c);
    n = txn.exec("SELECT count(*) FROM runs WHERE status = 'running'")[0][0].as<int64_t>();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return n;
}

}  // namespace perfgate::coordinator
