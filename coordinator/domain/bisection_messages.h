// The bisection routes' bodies and answers (docs/bisect.md, "The HTTP API"):
// the messages of proto/perfgate/v1/bisection.proto in the API's JSON
// (wire/api_json.h), to and from the store's records, with the checks a
// body must pass before anything is stored.
#pragma once

#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/store.h"
#include "perfgate/v1/bisection.pb.h"

namespace perfgate::coordinator {

/// A stored bisection as the API answers it: its plan, settings, outcome
/// and probes. INTERNAL when its stored plan or settings cannot be read.
absl::StatusOr<v1::Bisection> ToMessage(const store::Bisection& bisection);
/// How a bisection ended (its state, culprit or range, change, summary).
v1::BisectionOutcome ToMessage(const store::BisectionOutcome& outcome);
/// Stored bisections (without their probes), newest first.
absl::StatusOr<v1::ListBisectionsResponse> ToMessage(const std::vector<store::Bisection>& list);

/// A new bisection from a POST body (v1::CreateBisectionRequest): good,
/// bad and commits (non-empty, the last being bad) are required.
/// INVALID_ARGUMENT naming the field that is wrong.
absl::StatusOr<store::Bisection> BisectionFromBody(std::string_view body);
/// A probe from its POST body (v1::BisectionProbe): commit, attempt from 1
/// to 1000, a verdict and a positive threshold are required.
absl::StatusOr<store::BisectionProbe> ProbeFromBody(std::string_view body);
/// How a bisection ended, from its POST body (v1::BisectionOutcome): an
/// ended state and a summary, a culprit with state culprit and only then.
absl::StatusOr<store::BisectionOutcome> OutcomeFromBody(std::string_view body);

}  // namespace perfgate::coordinator
