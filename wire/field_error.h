// The error of a message field that does not hold, "FIELD: WHY" as an
// INVALID_ARGUMENT: what wire/'s conversions and checks return.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace perfgate::wire {

inline absl::Status FieldError(const std::string& field, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", why));
}

}  // namespace perfgate::wire
