// inference/serve, the serving case (docs/serving.md): registration, and the
// metrics a point reports once the percentiles its request count cannot
// bound are left out.
#pragma once

#include <vector>

#include "suites/registry.h"

namespace perfgate::suites::inference {

/// Registers inference/serve.
void RegisterServe(Registry& registry);

/// The metrics a point of inference/serve reports: every serving metric but
/// the percentiles whose one-sided 95 % order-statistic bound its `requests`
/// cannot give (stats::MinCountForQuantileBound).
std::vector<MetricKind> ServeMetrics(const BenchmarkId& id);

}  // namespace perfgate::suites::inference
