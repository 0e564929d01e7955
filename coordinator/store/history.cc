#include "coordinator/store/history.h"

#include "absl/strings/str_cat.h"
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
  p.point.finished_at = FromMicros(row[4].as<int64_t>());
  p.point.median = row[5].as<double>();
  p.p5 = NullableDouble(row[6]);
  p.p95 = NullableDouble(row[7]);
  p.point.n = row[8].as<uint32_t>();
  p.n_throttled = row[9].as<uint32_t>();
  p.invalid_reasons = Json::parse(row[10].as<std::string>()).get<std::vector<std::string>>();
  return p;
}

}  // namespace

absl::StatusOr<HistorySeries> HistoryRepository::GetHistory(const std::string& benchmark_key,
                                                const std::string& metric, const std::string& sku,
                                                const std::string& branch, uint32_t limit) {
  return db_.Run("reading history", [&](pqxx::connection& c) -> absl::StatusOr<HistorySeries> {
    pqxx::read_transaction txn(c);
    pqxx::result m = SeriesDefinition(txn, benchmark_key, metric);
    if (m.empty()) {
      return absl::NotFoundError(absl::StrCat("no results stored for benchmark ", benchmark_key,
                                              " metric '", metric, "'"));
    }
    HistorySeries series;
    series.unit = m[0][1].as<std::string>();
    ParseDirection(m[0][2].as<std::string>(), &series.direction);
    // The newest `limit` points, then turned oldest first.
    for (const auto& row : txn.exec_params(
             absl::StrCat("SELECT * FROM (SELECT r.id::text, r.commit, r.branch, r.node, ",
                          MicrosFromTimestamp("r.finished_at"),
                          " AS finished, s.median, s.n, r.finished_at AS f "
                          "FROM summaries s JOIN runs r ON r.id = s.run_id "
                          "WHERE s.metric_id = $1 AND r.status = 'complete' AND s.n > 0 "
                          "AND ($2 = '' OR r.sku = $2) AND ($3 = '' OR r.branch = $3) "
                          "ORDER BY r.finished_at DESC, r.id LIMIT $4) newest ORDER BY f, 1"),
             m[0][0].as<int64_t>(), sku, branch,
             static_cast<int64_t>(EffectiveLimit(limit, kDefaultHistoryLimit)))) {
      HistoryPoint p;
      p.run_id = row[0].as<std::string>();
      p.commit = row[1].as<std::string>();
      p.branch = row[2].as<std::string>();
      p.node = row[3].as<std::string>();
      p.finished_at = FromMicros(row[4].as<int64_t>());
      p.median = row[5].as<double>();
      p.n = row[6].as<uint32_t>();
      series.points.push_back(std::move(p));
    }
    return series;
  });
}

absl::StatusOr<Series> HistoryRepository::GetSeries(const SeriesQuery& q) {
  if (q.benchmark.empty()) return absl::InvalidArgumentError("benchmark: must not be empty");
  if (q.metric.empty()) return absl::InvalidArgumentError("metric: must not be empty");
  if (q.limit > kMaxSeriesPoints) {
    return absl::InvalidArgumentError(absl::StrCat("limit: at most ", kMaxSeriesPoints));
  }
  const int64_t limit = q.limit == 0 ? 200 : q.limit;
  return db_.Run("reading a series", [&](pqxx::connection& c) -> absl::StatusOr<Series> {
    pqxx::read_transaction txn(c);
    pqxx::result m = SeriesDefinition(txn, q.benchmark, q.metric);
    if (m.empty()) {
      return absl::NotFoundError(absl::StrCat("no results stored for benchmark ", q.benchmark,
                                              " metric '", q.metric, "'"));
    }
    Series series;
    series.unit = m[0][1].as<std::string>();
    ParseDirection(m[0][2].as<std::string>(), &series.direction);
    for (const auto& row : txn.exec_params(
             "SELECT * FROM (SELECT r.id::text, r.commit, r.branch, r.node, "
             "(extract(epoch from r.finished_at) * 1000000)::bigint, s.median, s.p5, s.p95, s.n, "
             "s.n_throttled, array_to_json(r.invalid_reasons)::text, r.finished_at AS f "
             "FROM summaries s JOIN runs r ON r.id = s.run_id "
             "WHERE s.metric_id = $1 AND r.status = 'complete' AND s.n > 0 AND s.median IS NOT NULL "
             "AND ($2 = '' OR r.sku = $2) AND ($3 = '' OR r.branch = $3) AND ($4 = '' OR r.node = $4) "
             "ORDER BY r.finished_at DESC, r.id LIMIT $5) newest ORDER BY f, 1",
             m[0][0].as<int64_t>(), q.sku, q.branch, q.node, limit)) {
      series.points.push_back(RowToPoint(row));
    }
    return series;
  });
}

}  // namespace perfgate::coordinator::store
