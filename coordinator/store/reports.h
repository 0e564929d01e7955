// Gate reports: each gate's JSON report stored against its candidate run,
// read back by id, and the verdicts of runs as the dashboard lists them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "coordinator/store/notifications.h"
#include "coordinator/store/repository.h"
#include "gate/gate.h"

namespace perfgate::coordinator::store {

/// A gate report of a run, without its body.
struct Verdict {
  int64_t report_id = 0;
  gate::Outcome outcome = gate::Outcome::kPass;
  std::string baseline_branch;
  TimePoint created_at{};
};

/// A gate report as stored, with the run it judged, for its notification.
struct StoredReport {
  int64_t id = 0;
  std::string branch, sku, commit;  // the candidate run's
  std::string baseline_branch;
};

class ReportRepository : protected Repository {
 public:
  /// Stores a gate report (its JSON form, with its outcome) and returns its
  /// id, with what `notify` words for it (a failed gate's notification) in
  /// the outbox in the same transaction.
  absl::StatusOr<int64_t> SaveGateReport(const std::string& candidate_run_id,
                                         const std::string& baseline_branch, gate::Outcome outcome,
                                         const std::string& report_json,
                                         const NotifyWith<StoredReport>& notify = {});
  /// The JSON of a stored report. NOT_FOUND when unknown.
  absl::StatusOr<std::string> GetGateReport(int64_t report_id);
  /// Every gate report of these runs, newest first per run (run id -> reports).
  absl::StatusOr<std::map<std::string, std::vector<Verdict>>> GateVerdicts(
      const std::vector<std::string>& run_ids);

 protected:
  using Repository::Repository;
};

}  // namespace perfgate::coordinator::store
