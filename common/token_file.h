// The bearer token shared by the coordinator and its clients, read from a
// file. One reader for both ends, so that what an agent sends and what the
// coordinator expects are cut from the file the same way.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace perfgate {

/// The token on the first line of `path`, trailing whitespace (a newline, a
/// carriage return, blanks) trimmed. INVALID_ARGUMENT naming the file when it
/// cannot be read or its first line holds no token.
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace perfgate
