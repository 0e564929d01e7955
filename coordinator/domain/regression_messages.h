// The regression routes' answers and the triage body (docs/dashboard.md,
// "Regressions"): the messages of proto/perfgate/v1/regression.proto in the
// API's JSON (wire/api_json.h), to and from the store's records.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store/regressions.h"
#include "perfgate/v1/regression.pb.h"

namespace perfgate::coordinator {

/// One triage move: `from` UNSPECIFIED for the detection that made the regression.
v1::TriageEvent ToMessage(const store::RegressionEvent& event);
/// A stored regression with its triage events, as the API answers it; a
/// value the store holds as not finite is an unset field.
v1::Regression ToMessage(const store::Regression& regression);
/// Stored regressions, in the order given (newest first).
v1::ListRegressionsResponse ToMessage(const std::vector<store::Regression>& list);

/// The triage move of regression `id` from its POST body
/// (v1::TriageRequest). INVALID_ARGUMENT for a body that is not the
/// message's JSON or a state that is UNSPECIFIED or unknown; the move's own
/// rules (a note and who, a commit for fixed only) are Triage's
/// (regressions.h).
absl::StatusOr<store::TriageChange> TriageFromBody(int64_t id, std::string_view body);

}  // namespace perfgate::coordinator
