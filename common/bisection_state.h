// How a bisection stands, shared by the command that runs one (`perfgate
// bisect`) and the coordinator that stores it: one enum and one table of the
// names its HTTP API and its database column use.
#pragma once

#include <optional>
#include <iterator>
#include <string_view>

namespace perfgate {

/// A bisection runs until it ends in one of the other states.
enum class BisectionState { kRunning, kCulprit, kNoCulprit, kRange };

/// The names, in the enum's order: what the HTTP API and the database's
/// text column hold.
inline constexpr std::string_view kBisectionStateNames[] = {"running", "culprit", "no_culprit", "range"};

/// "running", "culprit", "no_culprit" or "range".
inline std::string_view ToString(BisectionState state) { return kBisectionStateNames[static_cast<int>(state)]; }

/// The state named `name`; nullopt for a name that is none.
inline std::optional<BisectionState> ParseBisectionState(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kBisectionStateNames)); ++i) {
    if (kBisectionStateNames[i] == name) return static_cast<BisectionState>(i);
  }
  return std::nullopt;
}

}  // namespace perfgate
