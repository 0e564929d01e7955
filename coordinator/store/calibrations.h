// Calibrations: what a node measured of its own run-to-run spread, kept
// per (SKU, node, environment, case, metric), newest measurement wins.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/calibration.h"
#include "coordinator/store/records.h"
#include "coordinator/store/repository.h"

namespace perfgate::coordinator::store {

class CalibrationRepository : protected Repository {
 public:
  /// Stores what one calibration of a node measured, in one transaction: per
  /// (SKU, node, environment hash, benchmark, metric) the newest measurement
  /// is kept, so an entry older than the stored one is not written. Returns
  /// the entries written. NOT_FOUND for an unregistered agent;
  /// INVALID_ARGUMENT for an empty node or SKU, an invalid entry or one
  /// repeated.
  absl::StatusOr<uint32_t> PutCalibration(const std::string& agent_name, const CalibrationSet& set);
  /// Stored calibrations of `sku` on `node` measured in the environment with
  /// hash `environment_hash` and, with a max_age, no longer ago than that by
  /// this process's clock. Empty strings match all. Ordered by SKU, node,
  /// benchmark key, metric, then newest first.
  absl::StatusOr<std::vector<CalibrationRecord>> GetCalibrations(
      const std::string& sku, const std::string& node, const std::string& environment_hash,
      std::optional<std::chrono::seconds> max_age);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
