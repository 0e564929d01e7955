// perfgate's own result file read straight from its text (formats/ only):
// the fast path ParseResultText takes before any other reader is tried.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "formats/result_file.h"

namespace perfgate::formats {

/// Bytes of capacity beyond a text's end that let the parser read it in
/// place (simdjson's SIMDJSON_PADDING); without them it copies the text.
inline constexpr size_t kParsePadding = 64;

/// The result set of a perfgate result file, or INVALID_ARGUMENT starting
/// with `name` and naming the field it gets wrong; nullopt when the text is
/// not a perfgate result file that simdjson parses (another format, or not
/// JSON), which the general path then reads or explains.
std::optional<absl::StatusOr<ResultSet>> ReadPerfgateText(const std::string& text, const std::string& name);

}  // namespace perfgate::formats
