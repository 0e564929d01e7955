#include "coordinator/store/summaries.h"

#include <cmath>
#include <future>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/stats.h"
#include "common/status_macros.h"
#include "coordinator/process_medians.h"
#include "coordinator/store/ingest_checks.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sql.h"
#include "coordinator/store/summary_rows.h"

namespace perfgate::coordinator::store {

namespace {
// The cases and samples a run holds so far.
CloseOutcome StoredCounts(pqxx::transaction_base& txn, const std::string& run_id) {
  CloseOutcome out;
  const pqxx::row row = Prepared(txn, "stored_counts", run_id).at(0);
  out.cases = row[0].as<uint32_t>();
  out.samples = row[1].as<uint64_t>();
  return out;
}

// Every batch the agent says it sent must be here, or the summaries would
// silently leave samples out.
absl::Status CheckBatchesArrived(pqxx::transaction_base& txn, const std::string& run_id,
                                 uint64_t last_sequence) {
  uint64_t expected = 1;
  for (const auto& row : txn.exec_params(
           "SELECT sequence FROM batches WHERE run_id = $1 AND sequence <= $2 ORDER BY sequence",
           run_id,
           static_cast<int64_t>(
               std::min<uint64_t>(last_sequence, std::numeric_limits<int64_t>::max())))) {
    if (row[0].as<uint64_t>() != expected) break;
    ++expected;
  }
  if (expected <= last_sequence) {
    return absl::FailedPreconditionError(
        absl::StrCat("batch ", expected, " of ", last_sequence, " of run ", run_id,
                     " never arrived; resend the missing batches before closing the run"));
  }
  return absl::OkStatus();
}


// What CloseRun reads of a running run in one snapshot: its batches (to
// tell later whether any arrived meanwhile), its details and its samples.
struct CloseRead {
  std::optional<CloseOutcome> already_closed;  // a resent CloseRun: nothing to do
  std::string batches;                         // count, sum and max of the run's batches
  RunDetails details;
  bool blocked = false;  // several processes took the samples: their medians are stored too
  std::map<int64_t, MetricValues> metrics;     // by metric id: those summarized here
  Json kept = Json::array();                   // the rows StoreBatch kept, of metrics of one batch
};

// Reads the unthrottled values of the metrics of out.metrics that have
// samples (`read`) into it, one row per metric, its values one bytea: 400
// rows to take apart rather than 400k. For a run with process blocks, every
// metric's, in sample order (the order GetSamples gives the gate).
void ReadCloseValues(pqxx::transaction_base& txn, const std::string& run_id, const std::string& from,
                     const std::string& to, const std::vector<int64_t>& read, CloseRead& out) {
  if (!out.blocked) {
    if (read.empty()) return;
    for (const auto& row : Prepared(txn, "close_values", run_id, from, to, absl::StrCat("{", absl::StrJoin(read, ","), "}"))) {
      MetricValues& m = out.metrics[ParseNumber<int64_t>(row[0])];
      m.throttled = ParseNumber<uint32_t>(row[1]);
      m.values = ParseBinaryNumbers<double>(row[2]);
    }
    return;
  }
  for (const auto& row : Prepared(txn, "close_values_indexed", run_id, from, to)) {
    MetricValues& m = out.metrics[ParseNumber<int64_t>(row[0])];
    m.throttled = ParseNumber<uint32_t>(row[1]);
    m.values = InSampleOrder(ParseBinaryNumbers<double>(row[2]), ParseBinaryNumbers<int32_t>(row[3]));
  }
}

// A run's status column as the enum; a name it does not know reads as
// unspecified, which is neither running nor a way to close.
RunStatus StatusOf(const pqxx::field& column) {
  RunStatus status = RunStatus::kUnspecified;
  ParseRunStatus(column.as<std::string>(), &status);
  return status;
}

absl::StatusOr<CloseRead> ReadForClose(pqxx::transaction_base& txn, const std::string& run_id, RunStatus closing,
                                       uint64_t last_sequence) {
  CloseRead out;
  pqxx::result run =
      txn.exec_params(absl::StrCat("SELECT status, ", kRunBounds, ", details::text FROM runs WHERE id = $1"), run_id);
  if (run.empty()) return absl::NotFoundError(absl::StrCat("run ", run_id, " does not exist"));
  const RunStatus current = StatusOf(run[0][0]);
  if (current != RunStatus::kRunning) {
    if (current != closing) {
      return absl::FailedPreconditionError(absl::StrCat("run ", run_id, " was already closed as ",
                                                        run[0][0].as<std::string>(),
                                                        "; it cannot be closed again as ", ToString(closing)));
    }
    out.already_closed = StoredCounts(txn, run_id);  // a resent CloseRun
    out.already_closed->resent = true;
    return out;
  }
  PERFGATE_RETURN_IF_ERROR(ingest::CheckCloseAgainstStored(txn, run_id, closing, last_sequence));
  // A failed run is closed with what it has, a missing batch included.
  if (closing == RunStatus::kComplete) {
    PERFGATE_RETURN_IF_ERROR(CheckBatchesArrived(txn, run_id, last_sequence));
  }
  out.batches = Prepared(txn, "batch_print", run_id).at(0)[0].as<std::string>();
  out.details = ParseDetails(run[0][3].as<std::string>());
  out.blocked = HasProcessBlocks(out.details);
  // What StoreBatch kept is used when every batch kept it and no process
  // blocks need the samples in order; a metric with samples in one batch
  // then needs no reading, nor one without samples.
  const bool use_kept = !out.blocked && Prepared(txn, "batches_summarized", run_id).at(0)[0].as<bool>();
  std::vector<int64_t> read;
  for (const auto& row : Prepared(txn, "close_metrics", run_id)) {
    const auto metric_id = row[0].as<int64_t>();
    const auto sample_batches = row[2].as<int64_t>();
    if (use_kept && sample_batches == 1 && !row[3].is_null()) {
      out.kept.push_back(Json::parse(row[3].c_str()));
      continue;
    }
    out.metrics[metric_id].benchmark = row[1].as<std::string>();
    if (!use_kept || sample_batches > 0) read.push_back(metric_id);
  }
  ReadCloseValues(txn, run_id, run[0][1].as<std::string>(), run[0][2].as<std::string>(), read, out);
  return out;
}

// The medians of a metric's processes as a JSON array (null when a
// median is not finite: the gate then reads the samples).
Json ProcessMediansRow(const CloseRead& read, const MetricValues& v, const stats::Summary& s) {
  const std::vector<double> medians = ComputeProcessMedians(read.details, v.benchmark, v.values, s.n, s.median);
  if (!std::all_of(medians.begin(), medians.end(), [](double x) { return std::isfinite(x); })) return nullptr;
  return Json(medians);
}

// The summary row (JSON) of one metric, over its unthrottled samples, with
// how many throttled ones were left out and, for a run of several
// processes, the processes' medians.
Json CloseSummaryRow(const CloseRead& read, int64_t metric_id, const MetricValues& v) {
  const stats::Summary s = stats::Summarize(v.values);
  return SummaryRow(metric_id, s, v.throttled, read.blocked ? ProcessMediansRow(read, v, s) : Json(nullptr));
}

// The summary rows of every metric of the run, a large run's on two
// threads (no connection is held meanwhile).
Json SummaryRows(const CloseRead& read) {
  std::vector<std::pair<int64_t, const MetricValues*>> metrics;
  for (const auto& [id, v] : read.metrics) metrics.emplace_back(id, &v);
  auto rows_of = [&](size_t from, size_t to) {
    Json rows = Json::array();
    for (size_t i = from; i < to; ++i) rows.push_back(CloseSummaryRow(read, metrics[i].first, *metrics[i].second));
    return rows;
  };
  constexpr size_t kParallelFrom = 64;  // metrics; fewer are summarized in well under a millisecond
  Json rows;
  if (metrics.size() < kParallelFrom) {
    rows = rows_of(0, metrics.size());
  } else {
    const size_t half = metrics.size() / 2;
    auto second = std::async(std::launch::async, rows_of, half, metrics.size());
    rows = rows_of(0, half);
    for (Json& row : second.get()) rows.push_back(std::move(row));
  }
  for (const Json& row : read.kept) rows.push_back(row);
  return rows;
}

// Writes what ReadForClose saw and SummaryRows made, unless a batch arrived
// in between (then nullopt: read again).
absl::StatusOr<std::optional<CloseOutcome>> WriteClose(pqxx::work& txn, const std::string& run_id,
                                                       RunStatus closing, const CloseRead& read,
                                                       const Json& rows, const std::string& reason,
                                                       const std::vector<std::string>& invalid_reasons) {
  // FOR UPDATE waits for batches being stored (they hold FOR SHARE) and
  // keeps new ones out until the run is closed.
  pqxx::result run = txn.exec_params("SELECT status FROM runs WHERE id = $1 FOR UPDATE", run_id);
  if (run.empty()) return absl::NotFoundError(absl::StrCat("run ", run_id, " does not exist"));
  if (StatusOf(run[0][0]) != RunStatus::kRunning ||
      Prepared(txn, "batch_print", run_id).at(0)[0].as<std::string>() != read.batches) {
    return std::optional<CloseOutcome>();
  }
  Prepared(txn, "summaries_write", run_id, rows.dump());
  txn.exec_params(
      "UPDATE runs SET status = $2, finished_at = now(), failure_reason = $3, "
      "invalid_reasons = ARRAY(SELECT jsonb_array_elements_text($4::jsonb)) WHERE id = $1",
      run_id, ToString(closing), reason, Json(invalid_reasons).dump());
  // The run's points of its series, in the table history reads in series
  // order (migration 0014); a failed run is no point of any series.
  txn.exec_params(
      "INSERT INTO series_points (run_id, metric_id, finished_at, sku, branch, node, commit, median, p5, p95, "
      "n, n_throttled, invalid) SELECT r.id, s.metric_id, r.finished_at, r.sku, r.branch, r.node, r.commit, "
      "s.median, s.p5, s.p95, s.n, s.n_throttled, cardinality(r.invalid_reasons) > 0 "
      "FROM summaries s JOIN runs r ON r.id = s.run_id WHERE s.run_id = $1 AND r.status = 'complete' "
      "AND s.n > 0 AND s.median IS NOT NULL ON CONFLICT (run_id, metric_id) DO NOTHING",
      run_id);
  CloseOutcome out = StoredCounts(txn, run_id);
  txn.commit();
  return std::optional<CloseOutcome>(out);
}

}  // namespace
absl::StatusOr<CloseOutcome> SummaryRepository::CloseRun(const std::string& raw_run_id, RunStatus status,
                                             uint64_t last_sequence, const std::string& reason,
                                             const std::vector<std::string>& invalid_reasons) {
  auto run_id = NormalizeRunId(raw_run_id);
  PERFGATE_RETURN_IF_ERROR(run_id);
  if (status != RunStatus::kComplete && status != RunStatus::kFailed) {
    return absl::InvalidArgumentError(
        absl::StrCat("a run is closed as complete or failed, not ", ToString(status)));
  }
  // Read the samples in one snapshot, summarize them with no connection
  // held and no lock taken, then write under the run's lock if no batch
  // came in between. A batch arriving meanwhile (the agent still sending)
  // means reading again; a few times at most.
  constexpr int kAttempts = 4;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto read = db_.Run("closing a run", [&](pqxx::connection& c) -> absl::StatusOr<CloseRead> {
      pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(c);
      return ReadForClose(txn, *run_id, status, last_sequence);
    });
    PERFGATE_RETURN_IF_ERROR(read);
    if (read->already_closed) return *read->already_closed;
    const Json rows = SummaryRows(*read);
    read->metrics.clear();
    auto written = db_.Run("closing a run", [&](pqxx::connection& c) -> absl::StatusOr<std::optional<CloseOutcome>> {
      pqxx::work txn(c);
      return WriteClose(txn, *run_id, status, *read, rows, reason, invalid_reasons);
    });
    PERFGATE_RETURN_IF_ERROR(written);
    if (written->has_value()) return **written;
  }
  return absl::AbortedError(absl::StrCat("run ", *run_id, " kept receiving batches while being closed (",
                                         kAttempts, " attempts); close it once its batches are sent"));
}

absl::StatusOr<std::vector<MetricSummary>> SummaryRepository::GetSummaries(const std::string& run_id) {
  auto stored = GetGateSummaries(run_id);
  PERFGATE_RETURN_IF_ERROR(stored);
  std::vector<MetricSummary> out;
  out.reserve(stored->size());
  for (StoredSummary& s : *stored) out.push_back(std::move(s.summary));
  return out;
}

absl::StatusOr<std::vector<StoredSummary>> SummaryRepository::GetGateSummaries(const std::string& raw_run_id) {
  auto run_id = NormalizeRunId(raw_run_id);
  PERFGATE_RETURN_IF_ERROR(run_id);
  return db_.Run(
      "reading summaries", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<StoredSummary>> {
        pqxx::read_transaction txn(c);
        if (txn.exec_params("SELECT 1 FROM runs WHERE id = $1", *run_id).empty()) {
          return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
        }
        std::vector<StoredSummary> out;
        // COLLATE "C": byte order, the order std::string comparison gives, on any
        // database locale.
        for (const auto& row : txn.exec_params(
                 "SELECT b.key, m.name, m.unit, m.direction, s.n, s.n_throttled, s.median, s.mean, "
                 "s.stdev, s.min, s.max, s.noise, coalesce(rc.status, 'unspecified'), "
                 "coalesce(rc.reason, ''), s.mad, s.p5, s.p95, s.median_ci_low, s.median_ci_high, "
                 "s.process_medians, rc.bound_metric, rc.bound_kind, rc.bound_value "
                 "FROM summaries s JOIN metrics m ON m.id = s.metric_id "
                 "JOIN benchmarks b ON b.id = m.benchmark_id "
                 "LEFT JOIN run_cases rc ON rc.run_id = s.run_id AND rc.benchmark_id = b.id "
                 "WHERE s.run_id = $1 ORDER BY b.key COLLATE \"C\", m.name COLLATE \"C\"",
                 *run_id)) {
          StoredSummary stored;
          MetricSummary& ms = stored.summary;
          ms.benchmark = row[0].as<std::string>();
          ms.metric = row[1].as<std::string>();
          ms.unit = row[2].as<std::string>();
          ParseDirection(row[3].as<std::string>(), &ms.direction);
          ms.n = row[4].as<uint32_t>();
          ms.n_throttled = row[5].as<uint32_t>();
          ms.median = NullableDouble(row[6]);
          ms.mean = NullableDouble(row[7]);
          ms.stdev = NullableDouble(row[8]);
          ms.min = NullableDouble(row[9]);
          ms.max = NullableDouble(row[10]);
          ms.noise = NullableDouble(row[11]);
          ParseCaseStatus(row[12].as<std::string>(), &ms.status);
          ms.reason = row[13].as<std::string>();
          ms.mad = NullableDouble(row[14]);
          ms.p5 = NullableDouble(row[15]);
          ms.p95 = NullableDouble(row[16]);
          ms.median_ci_low = NullableDouble(row[17]);
          ms.median_ci_high = NullableDouble(row[18]);
          if (!row[19].is_null()) ParseFloatArray(row[19], stored.process_medians.emplace());
          if (!row[20].is_null() && row[20].as<std::string>() == ms.metric) {
            ValueBound b{ms.metric, ValueBound::Kind::kAtLeast, row[22].as<double>()};
            ParseBoundKind(row[21].as<std::string>(), &b.kind);
            ms.bound = b;
          }
          out.push_back(std::move(stored));
        }
        return out;
      });
}

absl::StatusOr<std::vector<std::string>> SummaryRepository::ExpireSilentRuns(double max_silence_s) {
  auto idle = db_.Run("finding silent runs", [&](pqxx::connection& c) -> absl::StatusOr<std::vector<std::string>> {
    pqxx::read_transaction txn(c);
    std::vector<std::string> ids;
    for (const auto& row : txn.exec_params(
             "SELECT r.id::text FROM runs r WHERE r.status = 'running' "
             "AND r.heard_at < now() - make_interval(secs => $1::float8) AND NOT EXISTS (SELECT 1 FROM batches b "
             "WHERE b.run_id = r.id AND b.received_at >= now() - make_interval(secs => $1::float8)) ORDER BY r.heard_at",
             max_silence_s)) {
      ids.push_back(row[0].as<std::string>());
    }
    return ids;
  });
  PERFGATE_RETURN_IF_ERROR(idle);
  std::vector<std::string> expired;
  const std::string reason = absl::StrFormat(
      "expired: no word from its agent for %.0f s (the agent stopped; `perfgate-agent replay` of its spool "
      "cannot add to a closed run)", max_silence_s);
  for (const std::string& id : *idle) {
    auto closed = CloseRun(id, RunStatus::kFailed, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()),
                           reason, {});
    if (closed.ok()) {
      // Closed already (by another coordinator's expiry, or by its agent as
      // failed): this one expired nothing.
      if (!closed->resent) expired.push_back(id);
    } else if (closed.status().code() != absl::StatusCode::kFailedPrecondition) {
      return closed.status();  // FAILED_PRECONDITION: closed meanwhile by its agent
    }
  }
  return expired;
}

}  // namespace perfgate::coordinator::store
