// `perfgate-agent calibrate`: measures how far this node's runs of each case
// move on their own. Every case is measured by N separate A/A processes of
// the agent's own `sample` worker, blocks sized by time as `ab` sizes them;
// per metric, the standard deviation of the log process medians is the
// node's noise floor for that case (docs/calibration.md). A gate uses it as
// the between-process spread where too few processes show their own.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "agent/ab.h"
#include "formats/calibration_file.h"
#include "gate/policy.h"

namespace perfgate::agent {

/// Fewest A/A processes a case is calibrated with: two degrees of freedom,
/// so that the t quantile of the fitness rule stays finite and modest.
inline constexpr unsigned kMinCalibrateProcesses = 3;

/// How calibrate measures a case.
struct CalibrateOptions {
  unsigned processes = 10;  // A/A processes per case, >= kMinCalibrateProcesses
  /// Block sizing: block_seconds and min_block_samples size each process's
  /// samples from a pilot, as MeasurePair does; fixed_block_samples > 0
  /// skips the pilot.
  AbOptions blocks;
};

/// One case as calibrated.
struct CaseCalibration {
  std::string key;
  CaseStatus status = CaseStatus::kOk;  // kOk, else how the process that stopped it ended
  std::string reason;                   // why it stopped; empty when ok
  unsigned block_samples = 0;           // samples each process took
  std::vector<CalibrationEntry> entries;  // per metric with a spread
};

/// Measures case `c` on `side`: a pilot (unless the block size is fixed),
/// then options.processes processes of the same sample count, each a fresh
/// process, and the spread of each metric over their medians. Stops at the
/// first process that fails, skips or reports other metrics than `c` names.
CaseCalibration CalibrateCase(const AbCase& c, Side& side, const CalibrateOptions& options);

/// The table calibrate prints: per case and metric the spread (as a
/// percentage), the processes, the 95 % half-width of a single-run change
/// and whether that is within the policy's tolerance for the case on `sku`
/// ("fit" to gate single runs); a line for each case that failed. Ends with
/// a newline.
std::string RenderCalibrationTable(const std::vector<CaseCalibration>& cases,
                                   const gate::Policy& policy, const std::string& sku);

}  // namespace perfgate::agent
