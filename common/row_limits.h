// How many rows each listing answers: the number when a request names none,
// and the most a request may ask for. The HTTP API, the gRPC Query service,
// the CLI's help and the store's queries all take them from here; no other
// place decides a row limit (docs/dashboard.md, "Row limits").
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"

namespace perfgate {

struct RowLimit {
  const char* rows;   // what is listed, for the error
  uint32_t fallback;  // when the request names no limit (0)
  uint32_t most;      // the largest a request may name
};

inline constexpr RowLimit kRunRows{"runs", 50, 1000};
inline constexpr RowLimit kBaselineRunRows{"baseline runs", 5, 1000};
inline constexpr RowLimit kSeriesPointRows{"points", 200, 10000};
inline constexpr RowLimit kRegressionRows{"regressions", 100, 1000};
inline constexpr RowLimit kBisectionRows{"bisections", 50, 1000};
inline constexpr RowLimit kDeliveryRows{"deliveries", 100, 1000};

/// The rows a request gets: `asked`, or the fallback for 0; INVALID_ARGUMENT
/// "limit: at most N <rows>" above the most.
absl::StatusOr<uint32_t> RowsFor(const RowLimit& limit, uint32_t asked);

/// The same for a caller that has already validated `asked` (a store's
/// query): above the most it is the most.
uint32_t ClampRows(const RowLimit& limit, uint32_t asked);

}  // namespace perfgate
