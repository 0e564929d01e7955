// The read and gate requests' text checks (validate_queries.h), with the
// limits of validate.h.
#include "wire/validate_queries.h"

#include <initializer_list>
#include <string>

#include "common/status_macros.h"
#include "wire/validate.h"

namespace perfgate::wire {
namespace {

// One text field of a request and how it is bounded.
struct Text {
  const char* field;
  const std::string& value;
  size_t max;
  bool line = true;
};

absl::Status CheckAll(std::initializer_list<Text> fields) {
  for (const Text& t : fields) {
    if (absl::Status s = CheckText(t.value, t.field, t.max, false, t.line); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// A benchmark key or glob: parameters and all.
constexpr size_t kMaxBenchmarkKey = 8192;

}  // namespace

absl::Status ValidateListRuns(const v1::ListRunsRequest& r) {
  return CheckAll({{"branch", r.branch(), kMaxBranch}, {"sku", r.sku(), kMaxSku}});
}

absl::Status ValidateGetRun(const v1::GetRunRequest& r) { return CheckAll({{"run_id", r.run_id(), 36}}); }

absl::Status ValidateHistory(const v1::HistoryRequest& r) {
  PERFGATE_RETURN_IF_ERROR(CheckAll({{"benchmark", r.benchmark(), kMaxBenchmarkKey},
                                     {"metric", r.metric(), kMaxMetricName},
                                     {"sku", r.sku(), kMaxSku},
                                     {"branch", r.branch(), kMaxBranch}}));
  if (r.has_from()) PERFGATE_RETURN_IF_ERROR(CheckTimestamp(r.from(), "from"));
  if (r.has_to()) PERFGATE_RETURN_IF_ERROR(CheckTimestamp(r.to(), "to"));
  return absl::OkStatus();
}

absl::Status ValidateFleet(const v1::FleetRequest& r) {
  return CheckAll({{"sku", r.sku(), kMaxSku},
                   {"sweep", r.sweep(), kMaxCiJob},
                   {"benchmark", r.benchmark(), kMaxBenchmarkKey},
                   {"metric", r.metric(), kMaxMetricName}});
}

absl::Status ValidateListCalibrations(const v1::ListCalibrationsRequest& r) {
  return CheckAll({{"sku", r.sku(), kMaxSku}, {"node", r.node(), kMaxNode}});
}

absl::Status ValidateEvaluate(const v1::EvaluateRequest& r) {
  return CheckAll({{"candidate_run_id", r.candidate_run_id(), 36},
                   {"baseline_branch", r.baseline_branch(), kMaxBranch},
                   {"baseline_commit", r.baseline_commit(), kMaxCommit},
                   {"policy_yaml", r.policy_yaml(), kMaxPolicyYaml, false},
                   {"policy_name", r.policy_name(), 4096},
                   {"baseline_run_id", r.baseline_run_id(), 36}});
}

}  // namespace perfgate::wire
