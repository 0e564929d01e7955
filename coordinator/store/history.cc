#include "coordinator/store/history.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "coordinator/store/database.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {
namespace {

SeriesPoint RowToPoint(const pqxx::row& row) {
  SeriesPoint p;
  p.point.run_id = row[0].as<std::string>();
  p.point.commit = row[1].as<std::string>();
  p.point.branch = row[2].as<std::string>();
  p.point.node = row[3].as<std::string>();
  p.point.finished_at = FromMicros(ParseNumber<int64_t>(row[4]));
  p.point.median = ParseNumber<double>(row[5]);
  p.p5 = NullableDouble(row[6]);
  p.p95 = NullableDouble(row[7]);
  p.point.n = ParseNumber<uint32_t>(row[8]);
  p.n_throttled = ParseNumber<uint32_t>(row[9]);
  // NULL for a run valid for gating (nearly all): nothing to parse.
  if (!row[10].is_null()) {
    p.invalid_reasons = Json::parse(row[10].as<std::string>()).get<std::vector<std::string>>();
  }
  return p;
}

// A condition on parameter $param when the filter is set; otherwise one
// that is always true but still names the parameter, so that every
// parameter has a type. Each combination of filters is its own statement
// text, planned for the index it can use (series_points_branch when a
// branch is given, series_points_newest otherwise).
std::string Condition(bool set, const std::string& when_set, int param, const char* type,
                      const char* unset_value) {
  if (set) return absl::StrCat(" AND ", when_set);
  return absl::StrCat(" AND $", param, "::", type, " = ", unset_value);
}

// The newest `limit` points of one series within [from, to), newest first.
// The query walks one index of series_points in the series' order, reads
// each point from the index alone and stops after `limit` rows, so the
// cost follows the answer, not the series; only a run invalid for gating
// has its reasons read from runs, by primary key. The rows come in the
// index's order: the caller turns them oldest first (sorting them again
// in PostgreSQL took a third of the query's time at 10 000 rows).
pqxx::result NewestPoints(pqxx::transaction_base& txn, int64_t metric_id, const SeriesQuery& q,
                          int64_t limit) {
  const bool from = q.from.has_value(), to = q.to.has_value();
  const std::string sql = absl::StrCat(
      "SELECT p.run_id::text, p.commit, p.branch, p.node, ", MicrosFromTimestamp("p.finished_at"),
      ", p.median, p.p5, p.p95, p.n, p.n_throttled, CASE WHEN p.invalid THEN (SELECT "
      "array_to_json(r.invalid_reasons)::text FROM runs r WHERE r.id = p.run_id) END "
      "FROM series_points p WHERE p.metric_id = $1",
      Condition(!q.sku.empty(), "p.sku = $2", 2, "text", "''"),
      Condition(!q.branch.empty(), "p.branch = $3", 3, "text", "''"),
      Condition(!q.node.empty(), "p.node = $4", 4, "text", "''"),
      Condition(from, absl::StrCat("p.finished_at >= ", TimestampFromMicros(6)), 6, "bigint", "0"),
      Condition(to, absl::StrCat("p.finished_at < ", TimestampFromMicros(7)), 7, "bigint", "0"),
      " ORDER BY p.finished_at DESC, p.run_id LIMIT $5");
  return txn.exec_params(sql, metric_id, q.sku, q.branch, q.node, limit,
                         from ? ToMicros(*q.from) : int64_t{0}, to ? ToMicros(*q.to) : int64_t{0});
}

// Points read newest first and reversed are oldest first, but runs that
// finished at the same instant come by run id descending: put those back
// in run id order (the order of the series everywhere).
void OldestFirst(std::vector<SeriesPoint>& points) {
  for (auto from = points.begin(); from != points.end();) {
    auto to = std::find_if(from, points.end(), [&](const SeriesPoint& p) {
      return p.point.finished_at != from->point.finished_at;
    });
    std::reverse(from, to);
    from = to;
  }
}

}  // namespace

absl::StatusOr<HistorySeries> HistoryRepository::GetHistory(const std::string& benchmark_key,
                                                const std::string& metric, const std::string& sku,
                                                const std::string& branch, uint32_t limit,
                                                std::optional<TimePoint> from, std::optional<TimePoint> to) {
  // The gate's history is the dashboard's series without the band: one
  // query for both, so they cannot disagree.
  SeriesQuery q;
  q.benchmark = benchmark_key;
  q.metric = metric;
  q.sku = sku;
  q.branch = branch;
  q.from = from;
  q.to = to;
  auto series = ReadSeries(q, ClampRows(kSeriesPointRows, limit), "reading history");
  PERFGATE_RETURN_IF_ERROR(series);
  HistorySeries history;
  history.unit = series->unit;
  history.direction = series->direction;
  history.points.reserve(series->points.size());
  for (SeriesPoint& p : series->points) history.points.push_back(std::move(p.point));
  return history;
}

absl::StatusOr<Series> HistoryRepository::GetSeries(const SeriesQuery& q) {
  if (q.benchmark.empty()) return absl::InvalidArgumentError("benchmark: must not be empty");
  if (q.metric.empty()) return absl::InvalidArgumentError("metric: must not be empty");
  auto limit = RowsFor(kSeriesPointRows, q.limit);
  if (!limit.ok()) return limit.status();
  return ReadSeries(q, *limit, "reading a series");
}

absl::StatusOr<Series> HistoryRepository::ReadSeries(const SeriesQuery& q, int64_t limit,
                                                     const char* what) {
  if (q.from && q.to && *q.to <= *q.from) {
    return absl::InvalidArgumentError("to: must be later than from");
  }
  return db_.Run(what, [&](pqxx::connection& c) -> absl::StatusOr<Series> {
    pqxx::read_transaction txn(c);
    pqxx::result m = SeriesDefinition(txn, q.benchmark, q.metric);
    if (m.empty()) {
      return absl::NotFoundError(absl::StrCat("no results stored for benchmark ", q.benchmark,
                                              " metric '", q.metric, "'"));
    }
    Series series;
    series.unit = m[0][1].as<std::string>();
    ParseDirection(m[0][2].as<std::string>(), &series.direction);
    const pqxx::result rows = NewestPoints(txn, m[0][0].as<int64_t>(), q, limit);
    series.points.reserve(rows.size());
    for (auto row = rows.rbegin(); row != rows.rend(); ++row) series.points.push_back(RowToPoint(*row));
    OldestFirst(series.points);
    return series;
  });
}

}  // namespace perfgate::coordinator::store
