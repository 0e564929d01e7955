// Where a regression stands in its triage (docs/dashboard.md, "Triage"):
// one enum for the coordinator's domain, its store and its HTTP API, and one
// table of the names the API, the webhooks and the database's text column
// use.
#pragma once

#include <optional>
#include <string_view>

#include "common/enum_names.h"

namespace perfgate {

/// A regression is detected 'new'; triage moves it to any of the others.
enum class RegressionState { kNew, kAcknowledged, kInvestigating, kFixed, kAccepted, kInvalid };

/// The names, in the enum's order.
inline constexpr std::string_view kRegressionStateNames[] = {"new",   "acknowledged", "investigating",
                                                             "fixed", "accepted",     "invalid"};

/// "new", "acknowledged", "investigating", "fixed", "accepted" or "invalid".
inline std::string_view ToString(RegressionState state) { return EnumName(kRegressionStateNames, state); }

/// The state named `name`; nullopt for a name that is none.
inline std::optional<RegressionState> ParseRegressionState(std::string_view name) {
  return ParseEnumName<RegressionState>(kRegressionStateNames, name);
}

}  // namespace perfgate
