// A moment given as text on a command line or in a URL parameter (the
// `from`/`to` of a history): seconds since the epoch (UTC), as the HTTP API
// writes times, or an RFC 3339 date and time.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "common/run_types.h"

namespace perfgate {

/// `text` as a moment: seconds since the epoch (an integer or a decimal, to the microsecond,
/// e.g. 1764300000 or 1764300000.5) or RFC 3339 (2026-11-28T02:00:00Z,
/// 2026-11-28T03:00:00+01:00). INVALID_ARGUMENT naming `name` and the text
/// otherwise.
absl::StatusOr<TimePoint> ParseTimeText(const std::string& name, const std::string& text);

}  // namespace perfgate
