// The coordinator's PostgreSQL storage as one object: a connection pool
// shared by one repository per concern (schema, agents and runs, batches
// and samples, close and summaries, history and series, calibrations,
// retention and partitions, gate reports, the dashboard's catalog,
// credentials, regressions, bisections, webhook endpoints and their outbox). Every write that belongs together is one
// transaction; libpqxx exceptions never leave this folder (they become
// statuses: connection trouble -> UNAVAILABLE, constraint misuse ->
// INVALID_ARGUMENT / FAILED_PRECONDITION, missing rows -> NOT_FOUND).
// A caller that needs one concern may take that repository alone.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store/batches.h"
#include "coordinator/store/bisections.h"
#include "coordinator/store/calibrations.h"
#include "coordinator/store/catalog.h"
#include "coordinator/store/credentials.h"
#include "coordinator/store/gate_source.h"
#include "coordinator/store/history.h"
#include "coordinator/store/jobs.h"
#include "coordinator/store/notifications.h"
#include "coordinator/store/records.h"
#include "coordinator/store/regressions.h"
#include "coordinator/store/reports.h"
#include "coordinator/store/retention.h"
#include "coordinator/store/runs.h"
#include "coordinator/store/schema.h"
#include "coordinator/store/summaries.h"

namespace perfgate::coordinator {
namespace store {

/// Owns the pool; a base of Store so that it is made before the repositories.
class DatabaseOwner {
 protected:
  explicit DatabaseOwner(std::unique_ptr<Database> db);
  ~DatabaseOwner();
  std::unique_ptr<Database> db_owned_;
};

}  // namespace store

class Store : private store::DatabaseOwner,
              public store::SchemaRepository,
              public store::RunRepository,
              public store::BatchRepository,
              public store::SummaryRepository,
              public store::HistoryRepository,
              public store::CalibrationRepository,
              public store::RetentionRepository,
              public store::ReportRepository,
              public store::CatalogRepository,
              public store::PgCredentialRepository,
              public store::PgRegressionRepository,
              public store::BisectionRepository,
              public store::NotificationRepository,
              public store::JobRepository,
              public store::GateSource,
              public store::SeriesSource {
 public:
  /// Connects with a libpq connection string ("host=... port=... dbname=...
  /// user=..."), keeping up to pool_size connections open.
  static absl::StatusOr<std::unique_ptr<Store>> Connect(const std::string& conninfo,
                                                        int pool_size = 4);
  ~Store();

  // What a gate reads (store/gate_source.h), from the repositories above.
  absl::StatusOr<store::RunRecord> GetRun(const std::string& run_id) override {
    return RunRepository::GetRun(run_id);
  }
  absl::StatusOr<std::vector<store::RunRecord>> FindBaselineRuns(const store::BaselineQuery& q) override {
    return RunRepository::FindBaselineRuns(q);
  }
  absl::StatusOr<std::vector<store::StoredSummary>> GetGateSummaries(const std::string& run_id) override {
    return SummaryRepository::GetGateSummaries(run_id);
  }
  absl::StatusOr<store::RunSamples> GetSamples(const std::string& run_id) override {
    return BatchRepository::GetSamples(run_id);
  }
  absl::StatusOr<std::vector<store::CalibrationRecord>> GetCalibrations(
      const std::string& sku, const std::string& node, const std::string& environment_hash,
      std::optional<std::chrono::seconds> max_age) override {
    return CalibrationRepository::GetCalibrations(sku, node, environment_hash, max_age);
  }
  // What detection reads (store/history.h's SeriesSource).
  absl::StatusOr<store::Series> GetSeries(const store::SeriesQuery& q) override {
    return HistoryRepository::GetSeries(q);
  }

 private:
  explicit Store(std::unique_ptr<store::Database> db);
};

// The records callers name without the folder's namespace.
using store::BaselineQuery;
using store::BatchOutcome;
using store::CalibrationRecord;
using store::CloseOutcome;
using store::PeriodicJob;
using store::RetentionOutcome;
using store::RetentionRule;
using store::RunRecord;
using store::RunSamples;
using store::StoredSummary;

}  // namespace perfgate::coordinator
