// Checks of the Query and Gate requests' text fields before anything is
// read: they are `bytes` on the wire (as Ingest's are) so that invalid UTF-8
// reaches the coordinator, which refuses it with INVALID_ARGUMENT naming the
// field instead of a parser error that names nothing.
#pragma once

#include "absl/status/status.h"
#include "perfgate/v1/gate.pb.h"
#include "perfgate/v1/query.pb.h"

namespace perfgate::wire {

/// Largest policy text Evaluate takes (a policy file of a repository).
inline constexpr size_t kMaxPolicyYaml = 1 << 20;

/// Each text field UTF-8 without NUL (a line without control characters
/// where it is one) and within the limit of the Ingest field it matches; a
/// history's from and to, when set, within validate.h's timestamps.
absl::Status ValidateListRuns(const v1::ListRunsRequest& r);
absl::Status ValidateGetRun(const v1::GetRunRequest& r);
absl::Status ValidateHistory(const v1::HistoryRequest& r);
absl::Status ValidateFleet(const v1::FleetRequest& r);
absl::Status ValidateListCalibrations(const v1::ListCalibrationsRequest& r);
absl::Status ValidateEvaluate(const v1::EvaluateRequest& r);

}  // namespace perfgate::wire
