// The summary rows CloseRun writes (statement summaries_write): one metric
// of a run summarized over its unthrottled values, from the samples read
// back at close or, for a metric that arrived whole in one batch, from the
// values StoreBatch has in hand (migration 0016). Internal to
// coordinator/store/ (it includes sql.h).
#pragma once

#include <cstdint>
#include <vector>

#include "common/run_types.h"
#include "common/stats.h"
#include "coordinator/store/sql.h"

namespace perfgate::coordinator::store {

/// One metric's samples of a run, or of a batch: the unthrottled values in
/// sample order where known, and how many throttled ones were left out.
struct MetricValues {
  std::string benchmark;  // the benchmark's key (filled where read back)
  std::vector<double> values;
  uint32_t throttled = 0;
};

/// The summary row of metric `metric_id`: its statistics `s` over the
/// unthrottled values (null when there are none), how many throttled ones
/// were left out, and the processes' medians when given.
Json SummaryRow(int64_t metric_id, const stats::Summary& s, uint32_t throttled, Json process_medians = nullptr);

/// The summary rows of every metric whose samples `cases` carry (the parts
/// of one case in a batch are one metric, its values in the batch's order),
/// as a JSON array.
Json BatchSummaryRows(const std::vector<CaseResult>& cases, const std::vector<CaseIds>& ids);

}  // namespace perfgate::coordinator::store
