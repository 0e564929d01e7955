// How a bisection and each of its probes stand, shared by the command that
// runs one (`perfgate bisect`) and the coordinator that stores it: one enum
// each and one table of the names its HTTP API and its database columns use.
#pragma once

#include <optional>
#include <string_view>

#include "common/enum_names.h"

namespace perfgate {

/// A bisection runs until it ends in one of the other states.
enum class BisectionState { kRunning, kCulprit, kNoCulprit, kRange };

/// The names, in the enum's order: what the HTTP API and the database's
/// text column hold.
inline constexpr std::string_view kBisectionStateNames[] = {"running", "culprit", "no_culprit", "range"};

/// "running", "culprit", "no_culprit" or "range".
inline std::string_view ToString(BisectionState state) { return EnumName(kBisectionStateNames, state); }

/// The state named `name`; nullopt for a name that is none.
inline std::optional<BisectionState> ParseBisectionState(std::string_view name) {
  return ParseEnumName<BisectionState>(kBisectionStateNames, name);
}

/// What one probe of a commit said against the bisection's threshold:
/// carries the change, clean, undecided (more rounds may tell) or failed
/// (not measured).
enum class ProbeVerdict { kCarries, kClean, kUndecided, kFailed };

/// The names, in the enum's order.
inline constexpr std::string_view kProbeVerdictNames[] = {"carries", "clean", "undecided", "failed"};

/// "carries", "clean", "undecided" or "failed".
inline std::string_view ToString(ProbeVerdict verdict) { return EnumName(kProbeVerdictNames, verdict); }

/// The verdict named `name`; nullopt for a name that is none.
inline std::optional<ProbeVerdict> ParseProbeVerdict(std::string_view name) {
  return ParseEnumName<ProbeVerdict>(kProbeVerdictNames, name);
}

}  // namespace perfgate
