#include "common/token_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace perfgate {

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read a token from ", path, ": ", std::strerror(errno)));
  }
  std::string line;
  std::getline(in, line);
  const std::string token(absl::StripTrailingAsciiWhitespace(line));
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot read a token from ", path, ": its first line is empty"));
  }
  return token;
}

}  // namespace perfgate
