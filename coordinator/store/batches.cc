#include "coordinator/store/batches.h"

#include <pqxx/tablewriter>

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/store/ingest_checks.h"
#include "coordinator/store/database.h"
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


// The benchmark and metric ids of one case, in the case's metric order.
using CaseIds = std::pair<int64_t, std::vector<int64_t>>;

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

// Bytes of COPY text CopySamples hands to libpq at a time.
constexpr size_t kCopyChunk = 1 << 18;

// Appends the text of an integer or of the shortest double that reads back
// exactly (as DoubleText) to a line of COPY text.
template <typename T>
void AppendNumber(std::string* line, T v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  line->append(buf, res.ptr);
}

// The batch's samples, one row per sample and metric, through COPY. The
// rows are written as COPY text in chunks of kCopyChunk bytes: libpqxx 6's
// stream_to converts, escapes and joins every field of every row, which
// cost more than PostgreSQL's parsing of them, and no field here needs
// escaping (a UUID, integers, finite doubles, t or f).
void CopySamples(pqxx::work& txn, const std::string& run_id, const std::vector<CaseResult>& cases,
                 const std::vector<CaseIds>& ids) {
  const std::vector<std::string> columns = {"run_id", "benchmark_id", "metric_id", "idx", "value", "throttled"};
  // tablewriter is the class of libpqxx 6 that writes raw COPY text
  // (stream_to keeps that private); deprecated there in favour of stream_to.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  pqxx::tablewriter copy(txn, "samples", columns.begin(), columns.end());
#pragma GCC diagnostic pop
  std::string chunk;
  chunk.reserve(kCopyChunk + 256);
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const auto& [bench_id, metric_ids] = ids[ci];
    std::vector<std::string> prefixes;  // "run\tbenchmark\tmetric\t" of each metric
    for (const int64_t metric_id : metric_ids) prefixes.push_back(absl::StrCat(run_id, "\t", bench_id, "\t", metric_id, "\t"));
    for (const Sample& s : cases[ci].samples) {
      for (size_t mi = 0; mi < metric_ids.size(); ++mi) {
        chunk += prefixes[mi];
        AppendNumber(&chunk, s.index);
        chunk += '\t';
        AppendNumber(&chunk, s.values[mi]);
        chunk += s.throttled ? "\tt\n" : "\tf\n";
      }
      if (chunk.size() >= kCopyChunk) {
        copy.write_raw_line(chunk);  // one final newline is taken off here and put back by libpqxx
        chunk.clear();
      }
    }
  }
  if (!chunk.empty()) copy.write_raw_line(chunk);
  copy.complete();
}

}  // namespace
absl::StatusOr<BatchOutcome> BatchRepository::StoreBatch(const std::string& raw_run_id, uint64_t sequence,
                                               const std::vector<CaseResult>& cases) {
  auto run_id = NormalizeRunId(raw_run_id);
  PERFGATE_RETURN_IF_ERROR(run_id);
  auto checked = CheckBatch(sequence, cases);
  PERFGATE_RETURN_IF_ERROR(checked);
  const uint64_t sample_count = *checked;
  const std::string digest = ingest::BatchDigest(cases);

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
        PERFGATE_RETURN_IF_ERROR(ingest::CheckResentBatch(txn, *run_id, seq, digest));
        outcome.duplicate = true;
        return outcome;
      }
      return absl::FailedPreconditionError(absl::StrCat(
          "run ", *run_id, " is ", ToString(status), "; results are accepted only while a run is running"));
    }
    if (Prepared(txn, "batch_insert", *run_id, seq, static_cast<int64_t>(sample_count), digest,
                 ingest::IndexRanges(cases))
            .empty()) {
      PERFGATE_RETURN_IF_ERROR(ingest::CheckResentBatch(txn, *run_id, seq, digest));
      outcome.duplicate = true;
      txn.commit();
      return outcome;
    }
    auto ids = StoreCases(txn, *run_id, seq, cases);
    PERFGATE_RETURN_IF_ERROR(ids);
    if (sample_count > 0) CopySamples(txn, *run_id, cases, *ids);
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
