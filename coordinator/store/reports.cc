#include "coordinator/store/reports.h"

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/store/database.h"
#include "coordinator/store/outbox.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {

absl::StatusOr<int64_t> ReportRepository::SaveGateReport(const std::string& candidate_run_id,
                                                         const std::string& baseline_branch, gate::Outcome outcome,
                                                         const std::string& report_json,
                                                         const NotifyWith<StoredReport>& notify) {
  auto run_id = NormalizeRunId(candidate_run_id);
  PERFGATE_RETURN_IF_ERROR(run_id);
  if (!Json::accept(report_json)) {
    return absl::InvalidArgumentError("the gate report is not valid JSON");
  }
  return db_.Run("saving a gate report", [&](pqxx::connection& c) -> absl::StatusOr<int64_t> {
    pqxx::work txn(c);
    const pqxx::result run = txn.exec_params("SELECT branch, sku, commit FROM runs WHERE id = $1", *run_id);
    if (run.empty()) {
      return absl::NotFoundError(absl::StrCat("candidate run ", *run_id, " does not exist"));
    }
    const int64_t id =
        txn.exec_params1(
               "INSERT INTO gate_reports (candidate_run_id, baseline_branch, outcome, report) "
               "VALUES ($1, $2, $3, $4::jsonb) RETURNING id",
               *run_id, baseline_branch, gate::ToString(outcome), report_json)[0]
            .as<int64_t>();
    NotifyInTransaction(txn, notify,
                        StoredReport{id, run[0][0].as<std::string>(), run[0][1].as<std::string>(),
                                     run[0][2].as<std::string>(), baseline_branch});
    txn.commit();
    return id;
  });
}

absl::StatusOr<std::string> ReportRepository::GetGateReport(int64_t report_id) {
  return db_.Run(
      "reading a gate report", [&](pqxx::connection& c) -> absl::StatusOr<std::string> {
        pqxx::read_transaction txn(c);
        pqxx::result r =
            txn.exec_params("SELECT report::text FROM gate_reports WHERE id = $1", report_id);
        if (r.empty())
          return absl::NotFoundError(absl::StrCat("gate report ", report_id, " does not exist"));
        return r[0][0].as<std::string>();
      });
}

namespace {

// The outcome column holds gate::ToString's names (SaveGateReport); a name
// of no outcome, which no release wrote, reads as inconclusive.
gate::Outcome OutcomeOfColumn(const std::string& name) {
  for (gate::Outcome o : {gate::Outcome::kPass, gate::Outcome::kRegression}) {
    if (name == gate::ToString(o)) return o;
  }
  return gate::Outcome::kInconclusive;
}

}  // namespace

absl::StatusOr<std::map<std::string, std::vector<Verdict>>> ReportRepository::GateVerdicts(
    const std::vector<std::string>& run_ids) {
  std::map<std::string, std::vector<Verdict>> out;
  if (run_ids.empty()) return out;
  absl::Status s = db_.Run("reading gate verdicts", [&](pqxx::connection& c) {
    pqxx::read_transaction txn(c);
    for (const auto& row : txn.exec_params(
             absl::StrCat("SELECT candidate_run_id::text, id, outcome, baseline_branch, ",
                          MicrosFromTimestamp("created_at"),
                          " FROM gate_reports WHERE candidate_run_id::text IN "
                          "(SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY created_at DESC, id DESC"),
             Json(run_ids).dump())) {
      Verdict v;
      v.report_id = row[1].as<int64_t>();
      v.outcome = OutcomeOfColumn(row[2].as<std::string>());
      v.baseline_branch = row[3].as<std::string>();
      v.created_at = FromMicros(row[4].as<int64_t>());
      out[row[0].as<std::string>()].push_back(std::move(v));
    }
    return absl::OkStatus();
  });
  PERFGATE_RETURN_IF_ERROR(s);
  return out;
}

}  // namespace perfgate::coordinator::store
