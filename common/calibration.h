// Calibrations of a node's noise floor, as the gate uses them: per case and
// metric, how far the medians of separate A/A processes move on their own,
// with the environment they were measured in (docs/calibration.md). The file
// they are kept in is formats/calibration_file.h; the wire form is
// wire/convert.h.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/run_types.h"

namespace perfgate {

/// The measured run-to-run spread of one metric of one case on one node.
struct CalibrationEntry {
  std::string benchmark;  // BenchmarkId::Key()
  std::string metric;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  double spread = 0;       // Bessel stdev of the natural logs of the process medians
  unsigned processes = 0;  // A/A processes the spread rests on (degrees of freedom + 1)
};

/// What one calibration of one node measured.
struct CalibrationSet {
  std::string node;          // hostname
  Environment environment;   // SKU and fields; its Hash() names the environment
  TimePoint measured_at{};   // when the measurement ended
  std::vector<CalibrationEntry> entries;
};

/// Fewest processes a stored spread may rest on: one degree of freedom.
inline constexpr unsigned kMinCalibrationProcesses = 2;

/// Checks one entry: a benchmark key that parses, a metric name and a unit,
/// a finite spread >= 0 and at least kMinCalibrationProcesses processes.
/// INVALID_ARGUMENT "<field>.<member>: <reason>".
absl::Status ValidateCalibrationEntry(const CalibrationEntry& entry, const std::string& field);

}  // namespace perfgate
