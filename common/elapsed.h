// Seconds on the steady clock since a moment: how the agent's jobs time
// their own phases (not the measurements: those go through measure/clock).
#pragma once

#include <chrono>

namespace perfgate {

inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace perfgate
