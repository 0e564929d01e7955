// The calibration file: a node's calibration as the small JSON file that
// `perfgate-agent calibrate` writes and `perfgate compare --calibration`
// reads (docs/calibration.md, "The file").
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/calibration.h"

namespace perfgate {

/// Value of the file's "format" key, and the version this perfgate writes and reads.
inline constexpr char kCalibrationFormat[] = "perfgate-calibration";
inline constexpr int kCalibrationVersion = 1;

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
