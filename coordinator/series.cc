#include "coordinator/series.h"

#include <limits>
#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace perfgate::coordinator {
namespace {

double OrNaN(const pqxx::field& f) {
  return f.is_null() ? std::numeric_limits<double>::quiet_NaN() : f.as<double>();
}

SeriesPoint RowToPoint(const pqxx::row& row) {
  SeriesPoint p;
  p.point.run_id = row[0].as<std::string>();
  p.point.commit = row[1].as<std::string>();
  p.point.branch = row[2].as<std::string>();
  p.point.node = row[3].as<std::string>();
  p.point.finished_at = TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::microseconds(row[4].as<int64_t>())));
  p.point.median = row[5].as<double>();
  p.p5 = OrNaN(row[6]);
  p.p95 = OrNaN(row[7]);
  p.point.n = row[8].as<uint32_t>();
  p.n_throttled = row[9].as<uint32_t>();
  p.invalid_reasons = nlohmann::json::parse(row[10].as<std::string>()).get<std::vector<std::string>>();
  return p;
}

}  // namespace

absl::StatusOr<Series> GetSeries(Store& store, const SeriesQuery& q) {
  if (q.benchmark.empty()) return absl::InvalidArgumentError("benchmark: must not be empty");
  if (q.metric.empty()) return absl::InvalidArgumentError("metric: must not be empty");
  if (q.limit > kMaxSeriesPoints) {
    return absl::InvalidArgumentError(absl::StrCat("limit: at most ", kMaxSeriesPoints));
  }
  const int64_t limit = q.limit == 0 ? 200 : q.limit;
  Series series;
  absl::Status s = store.WithConnection("reading a series", [&](pqxx::connection_base& c) {
    pqxx::read_transaction txn(c);
    pqxx::result m = Store::SeriesDefinition(txn, q.benchmark, q.metric);
    if (m.empty()) {
      return absl::NotFoundError(absl::StrCat("no results stored for benchmark ", q.benchmark,
                                              " metric '", q.metric, "'"));
    }
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
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return series;
}

ValidHistory ValidPoints(const Series& series) {
  ValidHistory out;
  out.history.unit = series.unit;
  out.history.direction = series.direction;
  for (size_t i = 0; i < series.points.size(); ++i) {
    if (!series.points[i].valid()) continue;
    out.history.points.push_back(series.points[i].point);
    out.source_index.push_back(i);
  }
  return out;
}

}  // namespace perfgate::coordinator
