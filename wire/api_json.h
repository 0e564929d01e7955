// The one JSON dialect of the coordinator's HTTP API for the resources whose
// messages are in proto/perfgate/v1 (docs/dashboard.md, "The JSON of the
// API"): protobuf's JSON mapping, with the field names as the .proto writes
// them (snake_case), every field printed, zeros and empty lists included,
// but an unset `optional` (a value not measured is absent, never NaN or
// null), enums by their names, 64-bit integers as strings and times as
// RFC 3339 text. The coordinator answers in it and the perfgate command
// reads it, so neither reads the other's JSON by key names.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "google/protobuf/message.h"

namespace perfgate::wire {

/// `message` in the API's JSON: on one line, or `indented` (a file a person
/// may read: two spaces a level, as protobuf's printer lays it out).
std::string ToApiJson(const google::protobuf::Message& message, bool indented = false);

/// Reads the API's JSON `text` into `message` (cleared first). A field the
/// message does not have is refused, not ignored: INVALID_ARGUMENT naming
/// `what` and the parser's reason (not JSON, an unknown field, a value of
/// the wrong type, an enum name that is none, text that is not UTF-8); the
/// reason is plain ASCII, never a quote of the input.
absl::Status FromApiJson(std::string_view text, google::protobuf::Message* message, std::string_view what);

}  // namespace perfgate::wire
