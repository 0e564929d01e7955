#include "coordinator/store/sql.h"

#include <algorithm>
#include <limits>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/identity.h"

namespace perfgate::coordinator::store {

// SQL expression turning microseconds since the epoch (a bigint parameter)
// into a timestamptz without going through floating point.
std::string TimestampFromMicros(int param) {
  return absl::StrCat("(to_timestamp(0) + $", param, "::bigint * interval '1 microsecond')");
}
// The reverse: exact, since extract() returns numeric.
std::string MicrosFromTimestamp(const std::string& column) {
  return absl::StrCat("(extract(epoch from ", column, ") * 1000000)::bigint");
}

int64_t ToMicros(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
TimePoint FromMicros(int64_t us) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::microseconds(us)));
}

double NullableDouble(const pqxx::field& f) {
  return f.is_null() ? std::numeric_limits<double>::quiet_NaN() : ParseNumber<double>(f);
}

std::string FirstLine(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  return std::string(text.substr(0, text.find('\n')));
}

// The columns RowToRun() reads, in order, from runs r joined with agents a and
// environments e.
const std::string& RunColumns() {
  static const std::string kColumns = absl::StrCat(
      "r.id::text, a.name, e.sku, e.fields::text, r.repo, r.branch, r.commit, r.trigger, "
      "r.ci_job, r.node, ",
      MicrosFromTimestamp("r.started_at"), ", array_to_json(r.parent_commits)::text, r.status, ",
      MicrosFromTimestamp("r.finished_at"),
      ", r.failure_reason, "
      "(SELECT coalesce(sum(b.sample_count), 0) FROM batches b WHERE b.run_id = r.id)::bigint, "
      "r.details::text, array_to_json(r.invalid_reasons)::text");
  return kColumns;
}

std::map<std::string, std::string> ParseDetails(const std::string& json) {
  std::map<std::string, std::string> out;
  const Json parsed = Json::parse(json);
  for (const auto& [k, v] : parsed.items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  return out;
}

RunRecord RowToRun(const pqxx::row& row) {
  RunRecord rec;
  RunMeta& m = rec.meta;
  m.run_id = row[0].as<std::string>();
  m.agent_name = row[1].as<std::string>();
  m.environment.sku = row[2].as<std::string>();
  const Json fields = Json::parse(row[3].as<std::string>());
  for (const auto& [k, v] : fields.items()) {
    m.environment.fields[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  m.repo = row[4].as<std::string>();
  m.branch = row[5].as<std::string>();
  m.commit = row[6].as<std::string>();
  if (!ParseTrigger(row[7].as<std::string>(), &m.trigger)) m.trigger = Trigger::kUnspecified;
  m.ci_job = row[8].as<std::string>();
  m.node = row[9].as<std::string>();
  m.started_at = FromMicros(row[10].as<int64_t>());
  m.parent_commits = Json::parse(row[11].as<std::string>()).get<std::vector<std::string>>();
  if (!ParseRunStatus(row[12].as<std::string>(), &rec.status)) rec.status = RunStatus::kUnspecified;
  if (!row[13].is_null()) rec.finished_at = FromMicros(row[13].as<int64_t>());
  rec.failure_reason = row[14].as<std::string>();
  rec.samples = row[15].as<uint64_t>();
  m.details = ParseDetails(row[16].as<std::string>());
  rec.invalid_reasons = Json::parse(row[17].as<std::string>()).get<std::vector<std::string>>();
  return rec;
}

void ParseFloatArray(const pqxx::field& f, std::vector<double>& out) {
  const char* p = f.c_str();
  const char* end = p + f.size();
  while (p < end && (*p == '{' || *p == ',' || *p == '}')) ++p;
  while (p < end) {
    double v = 0;
    const auto res = std::from_chars(p, end, v);
    if (res.ec != std::errc()) break;
    out.push_back(v);
    p = res.ptr;
    while (p < end && (*p == ',' || *p == '}')) ++p;
  }
}

std::vector<double> InSampleOrder(std::vector<double> values, std::vector<double> idx) {
  if (idx.size() != values.size()) idx.assign(values.size(), 0);  // never: one aggregation
  std::vector<size_t> order(values.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return idx[a] < idx[b]; });
  std::vector<double> out;
  out.reserve(values.size());
  for (size_t i : order) out.push_back(values[i]);
  return out;
}

pqxx::result SeriesDefinition(pqxx::transaction_base& txn, const std::string& key,
                                     const std::string& name) {
  constexpr const char* kDefinitions =
      "SELECT m.id, m.unit, m.direction FROM metrics m JOIN benchmarks b ON b.id = m.benchmark_id "
      "WHERE b.key = $1 AND m.name = $2 ";
  pqxx::result all = txn.exec_params(kDefinitions, key, name);
  if (all.size() <= 1) return all;
  // Several definitions (units) under one name: the newest complete run's.
  return txn.exec_params(
      absl::StrCat(kDefinitions,
                   "ORDER BY (SELECT max(r.finished_at) FROM summaries s JOIN runs r ON r.id = s.run_id "
                   "WHERE s.metric_id = m.id AND r.status = 'complete') DESC NULLS LAST, m.id LIMIT 1"),
      key, name);
}

int64_t EnvironmentId(pqxx::work& txn, const Environment& environment) {
  const std::string hash = environment.Hash();
  return LookupOrInsert(txn, "SELECT id FROM environments WHERE hash = $1", hash, [&] {
    txn.exec_params(
        "INSERT INTO environments (hash, sku, fields) VALUES ($1, $2, $3::jsonb) "
        "ON CONFLICT (hash) DO NOTHING",
        hash, environment.sku, Json(environment.fields).dump());
  });
}

std::string DoubleText(double v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

}  // namespace perfgate::coordinator::store
