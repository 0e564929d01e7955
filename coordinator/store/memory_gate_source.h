// What a gate and detection read, kept in memory: the GateSource of
// coordinator/store/gate_source.h and the SeriesSource of history.h (the
// series of the kept runs' medians) without a database, for tests of the
// coordinator's domain (coordinator/evaluate.h, regressions.h). A test puts runs as the
// Store would hold them after CloseRun (their summaries, process medians
// and samples) and calibrations as PutCalibration keeps them. One
// conformance suite holds it to the PostgreSQL implementation's behaviour
// (tests/coordinator/gate_source_test.cc).
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "coordinator/store/gate_source.h"
#include "coordinator/store/history.h"

namespace perfgate::coordinator::store {

class InMemoryGateSource final : public GateSource, public SeriesSource {
 public:
  /// Keeps `run` (replacing a run of its id) with its summaries, sorted as
  /// the Store returns them, and its samples.
  void PutRun(RunRecord run, std::vector<StoredSummary> summaries = {}, RunSamples samples = {});
  /// Keeps a calibration; one of the same SKU, node, environment, case and
  /// metric measured later is kept instead, as the Store keeps the newest.
  void PutCalibration(CalibrationRecord calibration);

  absl::StatusOr<RunRecord> GetRun(const std::string& run_id) override;
  absl::StatusOr<std::vector<RunRecord>> FindBaselineRuns(const BaselineQuery& q) override;
  absl::StatusOr<std::vector<StoredSummary>> GetGateSummaries(const std::string& run_id) override;
  absl::StatusOr<RunSamples> GetSamples(const std::string& run_id) override;
  absl::StatusOr<std::vector<CalibrationRecord>> GetCalibrations(
      const std::string& sku, const std::string& node, const std::string& environment_hash,
      std::optional<std::chrono::seconds> max_age) override;
  absl::StatusOr<Series> GetSeries(const SeriesQuery& q) override;

 private:
  struct Stored {
    RunRecord run;
    std::vector<StoredSummary> summaries;
    RunSamples samples;
  };
  absl::StatusOr<const Stored*> Find(const std::string& run_id) const;  // under mu_

  mutable std::mutex mu_;
  std::map<std::string, Stored> runs_;  // by lower-case id
  std::vector<CalibrationRecord> calibrations_;
};

}  // namespace perfgate::coordinator::store
