// Counted metrics (docs/statistics.md, "Counts"): what Valgrind's callgrind
// counts in exactly the measured region, read from its output file, and the
// client requests that mark that region in perfgate's own timed loop. A
// count does not move with a neighbour, a clock or a cache another process
// warmed, so one process a side decides where time needs rounds.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/count_metrics.h"
#include "common/run_types.h"

namespace perfgate {

/// The cost totals of one callgrind output file: its event names ("Ir",
/// "D1mr", "Bcm", ...) and the total of each, in the file's order.
struct CallgrindTotals {
  std::vector<std::string> events;
  std::vector<uint64_t> totals;
  /// The total of `event`, or -1 when the file did not count it.
  int64_t Event(const std::string& event) const;
};

/// Parses callgrind's output format: the "events:" line and the "totals:"
/// line (else "summary:", which older writers give alone). `name` starts
/// every error ("cg.out: no 'events:' line; is this a callgrind output
/// file?"). INVALID_ARGUMENT for a file without them, with a total that is
/// not a count, or with more totals than events.
absl::StatusOr<CallgrindTotals> ParseCallgrindOutput(const std::string& text, const std::string& name);

/// Reads the file at `path` and parses it; NOT_FOUND naming it when it
/// cannot be read.
absl::StatusOr<CallgrindTotals> ReadCallgrindOutput(const std::string& path);

/// The counted metrics of `totals` per iteration (`iterations` > 0), lower
/// is better: instructions always, the sim_* ones where the file counted
/// their events (I1mr+D1mr+D1mw, ILmr+DLmr+DLmw, Bcm+Bim). An error when
/// the file has no Ir or `iterations` is not positive.
absl::StatusOr<std::vector<std::pair<MetricSpec, double>>> CountsPerIteration(const CallgrindTotals& totals,
                                                                              double iterations);

/// Starts counting where the process runs under callgrind with
/// --collect-atstart=no (a few instructions that do nothing otherwise).
void StartCounting();
/// Stops what StartCounting started.
void StopCounting();

}  // namespace perfgate
