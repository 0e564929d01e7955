// `perfgate history`: a metric's series of run medians and the change points
// found in it, for a terminal (`--json` writes the answer, v1::HistoryResponse).
#pragma once

#include <string>

#include "common/history.h"

namespace perfgate::report {

/// A header naming the benchmark, metric and unit; one line per point (oldest
/// first); then one line per change point: "change point at <commit12>
/// (<date>, run <id>): median 10.1 → 12.3 ms, +21.8 % worse, p 0.005".
/// Ends with a newline.
std::string RenderHistory(const HistoryReport& history, const std::string& benchmark,
                          const std::string& metric);

}  // namespace perfgate::report
