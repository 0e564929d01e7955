#include "common/time_text.h"

#include <chrono>
#include <cmath>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace perfgate {

absl::StatusOr<TimePoint> ParseTimeText(const std::string& name, const std::string& text) {
  double seconds = 0;
  if (absl::SimpleAtod(text, &seconds) && std::isfinite(seconds)) {
    // To the microsecond, as the store keeps times: a double of today's
    // seconds holds no finer digits.
    return TimePoint(std::chrono::round<std::chrono::microseconds>(std::chrono::duration<double>(seconds)));
  }
  absl::Time t;
  std::string error;
  if (absl::ParseTime(absl::RFC3339_full, text, &t, &error)) return absl::ToChronoTime(t);
  return absl::InvalidArgumentError(absl::StrCat(
      name, ": '", text, "' is not a time (seconds since the epoch, or RFC 3339 such as 2026-11-28T02:00:00Z)"));
}

}  // namespace perfgate
