// History and series: the run medians of one metric of one case over the
// complete runs of a SKU and branch, as the gate's history comparison takes
// them (GetHistory) and as the dashboard and the regression detector read
// them (GetSeries: each run also with its p5–p95 band, throttled samples
// and the reasons it is invalid for gating).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/history.h"
#include "common/row_limits.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

/// Which series; empty sku/branch/node match all.
struct SeriesQuery {
  std::string benchmark;  // BenchmarkId::Key()
  std::string metric;
  std::string sku, branch, node;
  uint32_t limit = 0;  // the newest points; 0: kSeriesPointRows (common/row_limits.h)
  // Finished in [from, to); unset: no bound.
  std::optional<TimePoint> from, to;
};

/// One run of the series.
struct SeriesPoint {
  HistoryPoint point;      // run, commit, branch, node, finished_at, median, n
  double p5 = 0, p95 = 0;  // NaN for runs closed before p5/p95 were stored
  uint32_t n_throttled = 0;
  std::vector<std::string> invalid_reasons;  // empty: valid for gating
  bool valid() const { return invalid_reasons.empty(); }
};

struct Series {
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  std::vector<SeriesPoint> points;  // oldest first
};

/// What detection reads of a series (coordinator/regressions.h): the Store
/// reads it from PostgreSQL (HistoryRepository::GetSeries), the in-memory
/// source (memory_gate_source.h) from the runs it keeps; one conformance
/// suite holds both (tests/coordinator/gate_source_test.cc).
class SeriesSource {
 public:
  virtual ~SeriesSource() = default;
  /// As HistoryRepository::GetSeries.
  virtual absl::StatusOr<Series> GetSeries(const SeriesQuery& q) = 0;
};

class HistoryRepository : protected Repository {
 public:
  /// Run medians of one metric over complete runs, oldest first, at most limit
  /// newest points finished in [from, to) (each bound when set). Empty
  /// sku/branch match all. INVALID_ARGUMENT for to <= from.
  absl::StatusOr<HistorySeries> GetHistory(const std::string& benchmark_key,
                                           const std::string& metric, const std::string& sku,
                                           const std::string& branch, uint32_t limit,
                                           std::optional<TimePoint> from = std::nullopt,
                                           std::optional<TimePoint> to = std::nullopt);
  /// The newest q.limit points finished in [q.from, q.to), oldest first; it
  /// reads the rows it returns, whatever the series' length. NOT_FOUND when nothing was ever
  /// stored for the benchmark and metric; INVALID_ARGUMENT for an empty
  /// benchmark or metric, a limit above kSeriesPointRows.most or to <= from.
  absl::StatusOr<Series> GetSeries(const SeriesQuery& q);

 protected:
  using Repository::Repository;

 private:
  // The newest `limit` points of q (q.limit ignored), one read transaction.
  absl::StatusOr<Series> ReadSeries(const SeriesQuery& q, int64_t limit, const char* what);
};

}  // namespace perfgate::coordinator::store
