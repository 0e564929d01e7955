#include "common/row_limits.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace perfgate {

absl::StatusOr<uint32_t> RowsFor(const RowLimit& limit, uint32_t asked) {
  if (asked > limit.most) {
    return absl::InvalidArgumentError(absl::StrCat("limit: at most ", limit.most, " ", limit.rows));
  }
  return asked == 0 ? limit.fallback : asked;
}

uint32_t ClampRows(const RowLimit& limit, uint32_t asked) {
  return asked == 0 ? limit.fallback : std::min(asked, limit.most);
}

}  // namespace perfgate
