// A double in JSON output: JSON has no NaN or infinity, and a value the
// statistics could not compute (a median of nothing, a p-value without a
// test) is written as null, in every HTTP answer, report and event body.
#pragma once

#include <cmath>

#include <nlohmann/json.hpp>

namespace perfgate {

/// v itself when finite, else null; Json is nlohmann::json or ordered_json.
template <typename Json = nlohmann::json>
Json NumberOrNull(double v) {
  return std::isfinite(v) ? Json(v) : Json(nullptr);
}

}  // namespace perfgate
