// A node's noise floor in the gate: the spread of its A/A processes, whether
// a case is fit to gate single runs at a tolerance, and whether a stored
// calibration may stand for a candidate's node (docs/calibration.md).
#pragma once

#include <chrono>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/calibration.h"
#include "common/run_types.h"
#include "gate/gate.h"

namespace perfgate::gate {

/// The run-to-run spread of process medians: the standard deviation (Bessel,
/// n - 1) of their natural logs. NaN with fewer than two medians or with one
/// that is not > 0 (no log scale).
double LogSpread(std::span<const double> process_medians);

/// The calibration entries of one case measured by several A/A processes,
/// one CaseResult each (with the same metrics): per metric, each process's
/// median of its unthrottled samples, LogSpread over them, and the count of
/// processes that had one. A metric left with fewer than
/// kMinCalibrationProcesses processes, or without a log scale, is left out.
std::vector<CalibrationEntry> CalibrateProcesses(const std::vector<CaseResult>& processes);

/// Half-width, on the log scale, of the 95 % interval of the change between
/// one baseline run and one candidate run of a case whose runs move by
/// `spread`, known from `processes` processes:
/// t_{0.975, processes - 1} · spread · √2. NaN below two processes.
double SingleRunHalfWidth(double spread, unsigned processes);

/// Whether a case is fit to gate single runs at `tolerance` (a fraction):
/// SingleRunHalfWidth(spread, processes) <= tolerance.
bool FitToGate(double spread, unsigned processes, double tolerance);

/// The source a gate's note names: "node n1, 2026-11-20" (the UTC date).
std::string CalibrationSource(const std::string& node, TimePoint measured_at);

/// Why a calibration may not stand for a candidate on `sku` in the
/// environment with hash `environment_hash` (empty: not known, not
/// checked) at time `now`: another SKU, another environment, or older than
/// `max_age`. Empty when it may.
std::string CalibrationUnusable(const CalibrationSet& set, const std::string& sku,
                                const std::string& environment_hash, TimePoint now,
                                std::chrono::seconds max_age);

/// Whole days from `then` to `now`, rounded down (0 for a future `then`).
int64_t AgeDays(TimePoint then, TimePoint now);

/// A set's entries as the gate takes them: by (benchmark key, metric name),
/// with CalibrationSource as the source.
std::map<std::pair<std::string, std::string>, Calibration> GateCalibrations(const CalibrationSet& set);

}  // namespace perfgate::gate
