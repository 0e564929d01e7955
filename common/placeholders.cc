#include "common/placeholders.h"

#include <algorithm>

#include "absl/strings/str_replace.h"

namespace perfgate {

std::vector<std::string> ExpandPlaceholders(std::vector<std::string> argv, const PlaceholderValues& values) {
  for (std::string& word : argv) word = absl::StrReplaceAll(word, values);
  return argv;
}

std::string ExpandPlaceholders(const std::string& text, const PlaceholderValues& values) {
  return absl::StrReplaceAll(text, values);
}

bool NamesPlaceholder(const std::vector<std::string>& argv, std::string_view placeholder) {
  return std::any_of(argv.begin(), argv.end(),
                     [&](const std::string& word) { return NamesPlaceholder(word, placeholder); });
}

bool NamesPlaceholder(std::string_view text, std::string_view placeholder) {
  return text.find(placeholder) != std::string_view::npos;
}

}  // namespace perfgate
