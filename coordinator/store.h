// PostgreSQL storage of agents, environments, runs, samples, summaries and
// gate reports, through libpqxx. Every write that belongs together is one
// transaction; libpqxx exceptions never leave this module (they become
// statuses: connection trouble -> UNAVAILABLE, constraint misuse ->
// INVALID_ARGUMENT / FAILED_PRECONDITION, missing rows -> NOT_FOUND).
#pragma once

#include <pqxx/pqxx>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/calibration.h"
#include "common/history.h"
#include "common/model.h"

namespace pqxx {
class connection_base;
}  // namespace pqxx

namespace perfgate::coordinator {

/// A stored run as the queries and the gate see it.
struct RunRecord {
  RunMeta meta;
  RunStatus status = RunStatus::kUnspecified;
  std::optional<TimePoint> finished_at;
  uint64_t samples = 0;  // samples stored for the run (a sample carries all metrics of its case)
  std::string failure_reason;
  std::vector<std::string> invalid_reasons;  // why it may not gate; empty when valid
};

/// A metric's summary as a gate reads it: with the medians of its processes
/// where CloseRun stored them (a run of several processes, see
/// process_medians.h); nullopt for a run of one process or one closed
/// before they were stored.
struct StoredSummary {
  MetricSummary summary;
  std::optional<std::vector<double>> process_medians;
};

/// Unthrottled sample values by (benchmark key, metric name).
using RunSamples = std::map<std::pair<std::string, std::string>, std::vector<double>>;

/// What StoreBatch did.
struct BatchOutcome {
  bool duplicate = false;       // (run, sequence) had been stored before
  uint32_t samples_stored = 0;  // samples written by this call (0 for a duplicate)
};

/// What CloseRun did.
struct CloseOutcome {
  uint32_t cases = 0;    // benchmark cases summarized
  uint64_t samples = 0;  // samples stored for the run
};

/// Which runs may serve as the baseline of a gate.
struct BaselineQuery {
  std::string branch;                         // runs of this branch
  std::string sku;                            // on this SKU
  std::string exclude_run_id;                 // never the candidate itself
  std::vector<std::string> allowed_commits;   // when non-empty, only these commits
  uint32_t limit = 5;                         // the newest K
};

/// Which runs ExpireRuns removes: finished runs (complete or failed) that
/// match every field given. A run still running is never removed.
struct RetentionRule {
  std::optional<TimePoint> finished_before;  // finished before this (none: any time)
  std::string branch;                        // of this branch (empty: any branch)
};

/// What ExpireRuns removed.
struct RetentionOutcome {
  uint64_t runs = 0;
  uint64_t samples = 0;              // sample rows (one per sample and metric)
  uint32_t partitions_dropped = 0;   // monthly partitions of samples left empty and dropped
};

/// A stored calibration of one metric of one case on one node.
struct CalibrationRecord {
  std::string sku;
  std::string node;
  std::string environment_hash;  // Environment::Hash() of where it was measured
  CalibrationEntry entry;
  TimePoint measured_at{};
};

class Store {
 public:
  /// Connects with a libpq connection string ("host=... port=... dbname=...
  /// user=..."), keeping up to pool_size connections open.
  static absl::StatusOr<std::unique_ptr<Store>> Connect(const std::string& conninfo,
                                                        int pool_size = 4);
  ~Store();

  /// Applies every migration not yet applied, each in its own transaction,
  /// and records it in schema_migrations. Safe to call concurrently and twice.
  absl::Status Migrate();
  /// Highest applied migration version (0 when none).
  absl::StatusOr<int> SchemaVersion();
  /// Highest migration version this binary knows.
  static int LatestSchemaVersion();

  /// Creates the agent or refreshes its hostname/version/last_seen; returns its id.
  absl::StatusOr<int64_t> RegisterAgent(const std::string& name, const std::string& hostname,
                                        const std::string& version);

  /// Creates a run (environment deduplicated by hash). Returns true when a run
  /// with this id already existed and is still running (a resend: nothing
  /// changes). NOT_FOUND for an unregistered agent; ALREADY_EXISTS when the id
  /// belongs to a finished run.
  absl::StatusOr<bool> OpenRun(const RunMeta& meta);

  /// Stores one batch in one transaction: benchmarks and metrics upserted,
  /// samples written with COPY, (run, sequence) recorded. A batch already
  /// stored returns duplicate=true and writes nothing. NOT_FOUND for an
  /// unknown run, FAILED_PRECONDITION for a run that is not running,
  /// INVALID_ARGUMENT when a case's samples do not match its metrics or a
  /// case's metrics differ from those stored for it before.
  absl::StatusOr<BatchOutcome> StoreBatch(const std::string& run_id, uint64_t sequence,
                                          const std::vector<CaseResult>& cases);

  /// Finishes a run: checks batches 1..last_sequence are all stored
  /// (FAILED_PRECONDITION naming the first missing one otherwise), computes
  /// per-metric summaries over unthrottled samples with common/stats (and,
  /// for a run of several processes, their medians), records
  /// each case's final status, sets status and finished_at, and stores the
  /// reasons the run is invalid for gating (none: valid). Closing an already
  /// closed run with the same status is accepted and changes nothing.
  absl::StatusOr<CloseOutcome> CloseRun(const std::string& run_id, RunStatus status,
                                        uint64_t last_sequence, const std::string& reason,
                                        const std::vector<std::string>& invalid_reasons = {});

  /// Closes as failed every running run not heard of (OpenRun, a batch) for
  /// max_silence_s: its agent is gone. Returns the ids closed.
  absl::StatusOr<std::vector<std::string>> ExpireSilentRuns(double max_silence_s);

  /// One run. NOT_FOUND when unknown.
  absl::StatusOr<RunRecord> GetRun(const std::string& run_id);
  /// Newest first; empty filters match all.
  absl::StatusOr<std::vector<RunRecord>> ListRuns(const std::string& branch, const std::string& sku,
                                                  uint32_t limit);
  /// Per-metric summaries of a run, ordered by benchmark key then metric.
  absl::StatusOr<std::vector<MetricSummary>> GetSummaries(const std::string& run_id);
  /// The same with each metric's stored process medians.
  absl::StatusOr<std::vector<StoredSummary>> GetGateSummaries(const std::string& run_id);
  /// The unthrottled sample values of every metric of a run, in sample order.
  absl::StatusOr<RunSamples> GetSamples(const std::string& run_id);
  /// Complete runs matching q, newest finished first.
  absl::StatusOr<std::vector<RunRecord>> FindBaselineRuns(const BaselineQuery& q);
  /// Complete runs of a SKU in one sweep: those whose details name it as
  /// slurm_array_job_id or slurm_job_id, or whose ci_job is it; newest
  /// finished first. INVALID_ARGUMENT when sku or sweep is empty.
  absl::StatusOr<std::vector<RunRecord>> FindSweepRuns(const std::string& sku, const std::string& sweep);
  /// Run medians of one metric over complete runs, oldest first, at most limit
  /// newest points. Empty sku/branch match all.
  absl::StatusOr<HistorySeries> GetHistory(const std::string& benchmark_key,
                                           const std::string& metric, const std::string& sku,
                                           const std::string& branch, uint32_t limit);

  /// Stores what one calibration of a node measured, in one transaction: per
  /// (SKU, node, environment hash, benchmark, metric) the newest measurement
  /// is kept, so an entry older than the stored one is not written. Returns
  /// the entries written. NOT_FOUND for an unregistered agent;
  /// INVALID_ARGUMENT for an empty node or SKU, an invalid entry or one
  /// repeated.
  absl::StatusOr<uint32_t> PutCalibration(const std::string& agent_name, const CalibrationSet& set);
  /// Stored calibrations of `sku` on `node` measured in the environment with
  /// hash `environment_hash` and, with a max_age, no longer ago than that by
  /// this process's clock. Empty strings match all. Ordered by SKU, node,
  /// benchmark key, metric, then newest first.
  absl::StatusOr<std::vector<CalibrationRecord>> GetCalibrations(
      const std::string& sku, const std::string& node, const std::string& environment_hash,
      std::optional<std::chrono::seconds> max_age);

  /// Creates the monthly partitions of samples (months in UTC) from the
  /// month of `now` to `months_ahead` months after it, so that rows never
  /// land in the default partition and a new month costs no scan of it.
  /// Returns how many were created (0 when all exist). A month whose rows
  /// already landed in the default partition (partitions made too late)
  /// gets them moved into its new partition in the same transaction.
  absl::StatusOr<uint32_t> EnsurePartitions(TimePoint now, uint32_t months_ahead = 2);
  /// Removes the runs `rule` matches with everything stored for them
  /// (samples, cases, batches, summaries, gate reports): at most 100 runs
  /// per transaction, so each is short. Then drops the monthly partitions
  /// of past months left empty. INVALID_ARGUMENT for a rule with neither an age nor a branch.
  absl::StatusOr<RetentionOutcome> ExpireRuns(const RetentionRule& rule);

  /// Stores a gate report (its JSON form) and returns its id.
  absl::StatusOr<int64_t> SaveGateReport(const std::string& candidate_run_id,
                                         const std::string& baseline_branch,
                                         const std::string& outcome,
                                         const std::string& report_json);
  /// The JSON of a stored report. NOT_FOUND when unknown.
  absl::StatusOr<std::string> GetGateReport(int64_t report_id);

  /// Runs fn on a pooled connection, its libpqxx exceptions turned into
  /// statuses as for every call above (`what` names the operation): for the
  /// tables kept by other files of this folder (credentials.cc, regressions.cc, dashboard_queries.cc).
  absl::Status WithConnection(const std::string& what,
                              const std::function<absl::Status(pqxx::connection&)>& fn);

  /// The definition a series of metric `name` of benchmark `key` follows:
  /// rows (id, unit, direction), empty when none is stored. A metric is its
  /// name, unit and direction together (migration 0006); when several
  /// definitions share a name, the one of the newest complete run.
  static pqxx::result SeriesDefinition(pqxx::transaction_base& txn, const std::string& key,
                                       const std::string& name);

 private:
  class Pool;
  explicit Store(std::unique_ptr<Pool> pool);
  std::unique_ptr<Pool> pool_;
};

}  // namespace perfgate::coordinator
