#include "coordinator/store/batches.h"

#include <cmath>
#include <future>
#include <optional>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/store/ingest_checks.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sample_copy.h"
#include "coordinator/store/summary_rows.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {
namespace {

// Rejects a case whose samples cannot be stored, before anything is written:
// each sample must carry one finite value per metric.
absl::Status ValidateCase(const CaseResult& c, size_t case_index) {
  const std::string key = c.benchmark.Key();
  if (c.benchmark.suite.empty() || c.benchmark.name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("case ", case_index, " ('", key, "') has no suite or no name"));
  }
  if (c.metrics.empty() && !c.samples.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("benchmark ", key, " sends samples but declares no metrics"));
  }
  std::set<std::string> names;
  for (const MetricSpec& m : c.metrics) {
    if (m.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark ", key, " has a metric with no name"));
    }
    if (!names.insert(m.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark ", key, " declares metric '", m.name, "' twice"));
    }
  }
  for (const Sample& s : c.samples) {
    if (s.values.size() != c.metrics.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark ", key, " sample ", s.index, " has ", s.values.size(),
                       " values but the case declares ", c.metrics.size(),
                       " metrics (one value per metric, in order)"));
    }
    if (s.index > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("benchmark ", key, " sample index ", s.index, " is out of range"));
    }
    for (size_t i = 0; i < s.values.size(); ++i) {
      if (!std::isfinite(s.values[i])) {
        return absl::InvalidArgumentError(
            absl::StrCat("benchmark ", key, " sample ", s.index, " metric '", c.metrics[i].name,
                         "' is not a finite number (", s.values[i], ")"));
      }
    }
  }
  return absl::OkStatus();
}


// A batch's sample count, or why it is refused before anything is read.
absl::StatusOr<uint64_t> CheckBatch(uint64_t sequence, const std::vector<CaseResult>& cases) {
  if (sequence < 1 || sequence > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch sequence ", sequence, " is out of range; sequences start at 1"));
  }
  uint64_t sample_count = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    PERFGATE_RETURN_IF_ERROR(ValidateCase(cases[i], i));
    sample_count += cases[i].samples.size();
  }
  if (sample_count > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return absl::InvalidArgumentError("batch has too many samples; split it");
  }
  return sample_count;
}

// The ids of the benchmarks `keys` (key -> JSON of the row to insert), those
// not stored yet inserted first. Two statements when all exist: one.
std::map<std::string, int64_t> BenchmarkIds(pqxx::work& txn, const std::map<std::string, Json>& rows) {
  std::map<std::string, int64_t> ids;
  auto select = [&](const Json& keys) {
    for (const auto& row : Prepared(txn, "benchmark_ids", keys.dump())) {
      ids[row[0].as<std::string>()] = row[1].as<int64_t>();
    }
  };
  Json keys = Json::array();
  for (const auto& [key, row] : rows) keys.push_back(key);
  select(keys);
  Json missing = Json::array(), missing_keys = Json::array();
  for (const auto& [key, row] : rows) {
    if (ids.count(key) == 0) {
      missing.push_back(row);
      missing_keys.push_back(key);
    }
  }
  if (!missing.empty()) {
    // ON CONFLICT DO NOTHING waits for a concurrent insert of the same key;
    // the second SELECT (a new snapshot under READ COMMITTED) then sees it.
    Prepared(txn, "benchmark_insert", missing.dump());
    select(missing_keys);
  }
  return ids;
}

// A metric's definition: benchmark id, name, unit and direction (migration
// 0006: a different unit or direction is another metric, never a conflict).
using MetricDefinition = std::tuple<int64_t, std::string, std::string, std::string>;

MetricDefinition DefinitionOf(int64_t bench_id, const MetricSpec& m) {
  return {bench_id, m.name, m.unit, std::string(ToString(m.direction))};
}

// The ids of the metric definitions `wanted` (definition -> JSON of the row
// to insert), those not stored yet inserted first.
std::map<MetricDefinition, int64_t> MetricRows(pqxx::work& txn, const std::map<MetricDefinition, Json>& wanted) {
  std::map<MetricDefinition, int64_t> stored;
  auto select = [&](const Json& keys) {
    for (const auto& row : Prepared(txn, "metric_ids", keys.dump())) {
      stored[{row[0].as<int64_t>(), row[1].as<std::string>(), row[3].as<std::string>(),
              row[4].as<std::string>()}] = row[2].as<int64_t>();
    }
  };
  Json keys = Json::array();
  for (const auto& [key, row] : wanted) keys.push_back(row);
  select(keys);
  Json missing = Json::array();
  for (const auto& [key, row] : wanted) {
    if (stored.count(key) == 0) missing.push_back(row);
  }
  if (!missing.empty()) {
    Prepared(txn, "metric_insert", missing.dump());
    select(missing);
  }
  return stored;
}

// The run's row of each case, with how it ended once a batch says so (the
// last status a batch gives for a case wins, an unspecified one changes
// nothing), and a summary row (statistics NULL) per metric, so CloseRun also
// summarizes a case whose samples never came (n = 0).
void RecordRunCases(pqxx::work& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                    const std::vector<CaseIds>& ids) {
  std::map<int64_t, Json> run_cases;
  Json summary_metrics = Json::array();
  for (size_t i = 0; i < cases.size(); ++i) {
    const CaseResult& cr = cases[i];
    for (int64_t metric_id : ids[i].second) summary_metrics.push_back(metric_id);
    Json& row = run_cases[ids[i].first];
    if (cr.status != CaseStatus::kUnspecified) {
      row = {{"b", ids[i].first}, {"status", ToString(cr.status)}, {"reason", cr.reason},
             {"noise", std::isfinite(cr.noise) ? cr.noise : 0.0}};
      if (cr.bound) {
        row["bound_metric"] = cr.bound->metric;
        row["bound_kind"] = ToString(cr.bound->kind);
        row["bound_value"] = cr.bound->value;
      }
    } else if (row.is_null()) {
      row = {{"b", ids[i].first}, {"status", "unspecified"}, {"reason", ""}, {"noise", 0.0}};
    }
  }
  Json rows = Json::array();
  for (auto& [bench_id, row] : run_cases) rows.push_back(std::move(row));
  Prepared(txn, "run_cases_upsert", run_id, rows.dump());
  Prepared(txn, "summary_placeholders", run_id, summary_metrics.dump());
}

// Registers the cases of batch `sequence`: benchmarks and metrics when new
// (a few statements for the whole batch, not a few per case), the run's row
// per case and the summary placeholders, after the checks against what the
// run holds (one definition per metric, no sample index twice). Returns
// each case's ids.
absl::StatusOr<std::vector<CaseIds>> StoreCases(pqxx::work& txn, const std::string& run_id, int64_t sequence,
                                                const std::vector<CaseResult>& cases) {
  std::map<std::string, Json> bench_rows;
  for (const CaseResult& cr : cases) {
    const std::string key = cr.benchmark.Key();
    bench_rows.try_emplace(key, Json{{"key", key}, {"suite", cr.benchmark.suite},
                                     {"name", cr.benchmark.name}, {"params", Json(cr.benchmark.params)}});
  }
  const std::map<std::string, int64_t> bench_ids = BenchmarkIds(txn, bench_rows);
  std::map<MetricDefinition, Json> metric_rows;
  for (const CaseResult& cr : cases) {
    const int64_t bench_id = bench_ids.at(cr.benchmark.Key());
    for (const MetricSpec& m : cr.metrics) {
      metric_rows.try_emplace(DefinitionOf(bench_id, m), Json{{"b", bench_id}, {"name", m.name}, {"unit", m.unit},
                                                              {"direction", ToString(m.direction)}});
    }
  }
  const auto stored = MetricRows(txn, metric_rows);
  std::vector<CaseIds> ids;
  std::vector<std::vector<int64_t>> metric_ids;
  std::vector<int64_t> first_metric_ids;
  for (const CaseResult& cr : cases) {
    const int64_t bench_id = bench_ids.at(cr.benchmark.Key());
    std::vector<int64_t> case_metrics;
    for (const MetricSpec& m : cr.metrics) case_metrics.push_back(stored.at(DefinitionOf(bench_id, m)));
    first_metric_ids.push_back(case_metrics.empty() ? 0 : case_metrics.front());
    metric_ids.push_back(case_metrics);
    ids.emplace_back(bench_id, std::move(case_metrics));
  }
  PERFGATE_RETURN_IF_ERROR(ingest::CheckOneDefinition(txn, run_id, cases, metric_ids));
  PERFGATE_RETURN_IF_ERROR(ingest::CheckNewIndices(txn, run_id, sequence, cases, first_metric_ids));
  RecordRunCases(txn, run_id, cases, ids);
  return ids;
}

// Sample values of a batch from which its digest and its metrics' summaries
// are made on a thread of their own, while PostgreSQL takes the COPY; a
// smaller batch is done in well under a millisecond, after it.
constexpr uint64_t kAsideFrom = 16384;

// The batch's samples (COPY), its digest (the row of batch_insert has none
// until here: no other transaction sees it before the commit) and the
// summary of each metric it brings, kept for CloseRun (migration 0016):
// used there when no other batch of the run brings samples of the metric.
void StoreContent(pqxx::work& txn, const std::string& run_id, int64_t sequence,
                  const std::vector<CaseResult>& cases, const std::vector<CaseIds>& ids, uint64_t sample_count) {
  auto made = [&] { return std::make_pair(ingest::BatchDigest(cases), BatchSummaryRows(cases, ids).dump()); };
  std::pair<std::string, std::string> digest_and_rows;
  if (sample_count >= kAsideFrom) {
    auto aside = std::async(std::launch::async, made);
    CopySamples(txn, run_id, cases, ids);
    digest_and_rows = aside.get();
  } else {
    if (sample_count > 0) CopySamples(txn, run_id, cases, ids);
    digest_and_rows = made();
  }
  Prepared(txn, "batch_digest", run_id, sequence, digest_and_rows.first);
  if (sample_count > 0) Prepared(txn, "batch_summaries", run_id, digest_and_rows.second);
}

}  // namespace
absl::StatusOr<BatchOutcome> BatchRepository::StoreBatch(const std::string& raw_run_id, uint64_t sequence,
                                               const std::vector<CaseResult>& cases) {
  auto run_id = NormalizeRunId(raw_run_id);
  PERFGATE_RETURN_IF_ERROR(run_id);
  auto checked = CheckBatch(sequence, cases);
  PERFGATE_RETURN_IF_ERROR(checked);
  const uint64_t sample_count = *checked;
  // Made once, where a resend is compared with what is stored.
  std::optional<std::string> digest;
  auto digest_of_batch = [&]() -> const std::string& {
    if (!digest) digest = ingest::BatchDigest(cases);
    return *digest;
  };

  return db_.Run("storing a batch", [&](pqxx::connection& c) -> absl::StatusOr<BatchOutcome> {
    pqxx::work txn(c);
    // FOR SHARE: batches of one run are stored concurrently, but CloseRun
    // (FOR UPDATE) waits for them, so it never summarizes half a batch.
    pqxx::result run = Prepared(txn, "run_for_share", *run_id);
    if (run.empty()) {
      return absl::NotFoundError(
          absl::StrCat("run ", *run_id, " does not exist; call OpenRun before sending results"));
    }
    RunStatus status = RunStatus::kUnspecified;
    ParseRunStatus(run[0][0].as<std::string>(), &status);
    const auto seq = static_cast<int64_t>(sequence);
    BatchOutcome outcome;
    if (status != RunStatus::kRunning) {
      // A resend of a batch stored before the run closed is still a duplicate.
      if (!txn.exec_params("SELECT 1 FROM batches WHERE run_id = $1 AND sequence = $2", *run_id, seq)
               .empty()) {
        PERFGATE_RETURN_IF_ERROR(ingest::CheckResentBatch(txn, *run_id, seq, digest_of_batch()));
        outcome.duplicate = true;
        return outcome;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "run ", *run_id, " is ", ToString(status), "; results are accepted only while a run is running"));
    }
    if (Prepared(txn, "batch_insert", *run_id, seq, static_cast<int64_t>(sample_count), ingest::IndexRanges(cases))
            .empty()) {
      PERFGATE_RETURN_IF_ERROR(ingest::CheckResentBatch(txn, *run_id, seq, digest_of_batch()));
      outcome.duplicate = true;
      txn.commit();
      return outcome;
    }
    auto ids = StoreCases(txn, *run_id, seq, cases);
    PERFGATE_RETURN_IF_ERROR(ids);
    StoreContent(txn, *run_id, seq, cases, *ids, sample_count);
    txn.commit();
    outcome.samples_stored = static_cast<uint32_t>(sample_count);
    return outcome;
  });
}

absl::StatusOr<RunSamples> BatchRepository::GetSamples(const std::string& raw_run_id) {
  auto run_id = NormalizeRunId(raw_run_id);
  PERFGATE_RETURN_IF_ERROR(run_id);
  return db_.Run("reading samples", [&](pqxx::connection& c) -> absl::StatusOr<RunSamples> {
    pqxx::read_transaction txn(c);
    pqxx::result run = txn.exec_params(absl::StrCat("SELECT ", kRunBounds, " FROM runs WHERE id = $1"), *run_id);
    if (run.empty()) return absl::NotFoundError(absl::StrCat("run ", *run_id, " does not exist"));
    std::map<int64_t, std::pair<std::string, std::string>> names;  // metric id -> (benchmark key, metric)
    for (const auto& row : txn.exec_params(
             "SELECT m.id, b.key, m.name FROM summaries s JOIN metrics m ON m.id = s.metric_id "
             "JOIN benchmarks b ON b.id = m.benchmark_id WHERE s.run_id = $1",
             *run_id)) {
      names[row[0].as<int64_t>()] = {row[1].as<std::string>(), row[2].as<std::string>()};
    }
    // One row per metric, its unthrottled values in sample order as one
    // array: a few hundred rows to take apart rather than a row per value.
    RunSamples out;
    for (const auto& row : Prepared(txn, "run_values", *run_id, run[0][0].as<std::string>(),
                                    run[0][1].as<std::string>())) {
      auto name = names.find(ParseNumber<int64_t>(row[0]));
      if (name == names.end()) continue;
      std::vector<double> idx, values;
      ParseFloatArray(row[1], idx);
      ParseFloatArray(row[2], values);
      out[name->second] = InSampleOrder(std::move(values), std::move(idx));
    }
    return out;
  });
}

}  // namespace perfgate::coordinator::store
