// Calibrations of a node's noise floor: per case and metric, how far the
// medians of separate A/A processes move on their own, with the environment
// they were measured in. `perfgate-agent calibrate` measures them and writes
// them as a small JSON file (docs/calibration.md, "The file"); the gate reads
// them back as the between-process spread of a t test.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/model.h"

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

/// Value of the file's "format" key, and the version this perfgate writes and reads.
inline constexpr char kCalibrationFormat[] = "perfgate-calibration";
inline constexpr int kCalibrationVersion = 1;

/// Fewest processes a stored spread may rest on: one degree of freedom.
inline constexpr unsigned kMinCalibrationProcesses = 2;

/// Checks one entry: a benchmark key that parses, a metric name and a unit,
/// a finite spread >= 0 and at least kMinCalibrationProcesses processes.
/// INVALID_ARGUMENT "<field>.<member>: <reason>".
absl::Status ValidateCalibrationEntry(const CalibrationEntry& entry, const std::string& field);

/// The JSON text of a calibration file: format, version, sku, node,
/// environment_hash, environment (fields), measured_at (UTC), entries.
std::string WriteCalibrationJson(const CalibrationSet& set);

/// Parses and validates a calibration file's text. `name` starts every
/// error ("cal.json: entries[2].spread: must be finite and >= 0"); an
/// environment_hash that does not match the environment is refused, since
/// the gate would then use the spread for another environment.
absl::StatusOr<CalibrationSet> ParseCalibrationJson(const std::string& text, const std::string& name);

/// Reads and parses a calibration file; NOT_FOUND naming it when unreadable.
absl::StatusOr<CalibrationSet> ReadCalibrationFile(const std::string& path);

/// Writes WriteCalibrationJson's text to path whole (temporary file, then rename).
absl::Status WriteCalibrationFile(const std::string& path, const CalibrationSet& set);

}  // namespace perfgate
