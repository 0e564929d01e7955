#include "common/calibration.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/identity.h"

namespace perfgate {
namespace {

absl::Status Bad(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

std::string Member(const std::string& path, const std::string& key) {
  return path.empty() ? key : absl::StrCat(path, ".", key);
}

}  // namespace

absl::Status ValidateCalibrationEntry(const CalibrationEntry& entry, const std::string& field) {
  if (entry.benchmark.empty()) return Bad(Member(field, "benchmark"), "must not be empty");
  if (auto id = ParseBenchmarkKey(entry.benchmark); !id.ok()) {
    return Bad(Member(field, "benchmark"), std::string(id.status().message()));
  }
  if (entry.metric.empty()) return Bad(Member(field, "metric"), "must not be empty");
  if (entry.unit.empty()) return Bad(Member(field, "unit"), "must not be empty");
  if (!std::isfinite(entry.spread) || entry.spread < 0) {
    return Bad(Member(field, "spread"),
               absl::StrCat("must be finite and >= 0 (a standard deviation of logs), got ", entry.spread));
  }
  if (entry.processes < kMinCalibrationProcesses) {
    return Bad(Member(field, "processes"),
               absl::StrCat("must be at least ", kMinCalibrationProcesses, " (a spread needs two processes), got ",
                            entry.processes));
  }
  return absl::OkStatus();
}

}  // namespace perfgate
