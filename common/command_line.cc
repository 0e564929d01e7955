// Command lines split as a shell would split them, and words quoted so
// that the split gives them back, with no shell ever run (command_line.h).
#include "common/command_line.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace perfgate {

absl::StatusOr<std::vector<std::string>> SplitCommand(const std::string& command) {
  std::vector<std::string> out;
  std::string word;
  bool in_word = false;
  enum class Quote { kNone, kSingle, kDouble } quote = Quote::kNone;
  for (size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    switch (quote) {
      case Quote::kSingle:
        if (c == '\'') {
          quote = Quote::kNone;
        } else {
          word += c;
        }
        continue;
      case Quote::kDouble:
        if (c == '"') {
          quote = Quote::kNone;
        } else if (c == '\\' && i + 1 < command.size() &&
                   std::strchr("\"\\$`", command[i + 1]) != nullptr) {
          word += command[++i];
        } else {
          word += c;
        }
        continue;
      case Quote::kNone:
        break;
    }
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) out.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    in_word = true;
    if (c == '\'') {
      quote = Quote::kSingle;
    } else if (c == '"') {
      quote = Quote::kDouble;
    } else if (c == '\\') {
      if (i + 1 == command.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("command '", command, "' ends in a backslash; escape it as \\\\"));
      }
      word += command[++i];
    } else {
      word += c;
    }
  }
  if (quote != Quote::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat("command '", command, "' has an unterminated ",
                     quote == Quote::kSingle ? "single" : "double", " quote"));
  }
  if (in_word) out.push_back(std::move(word));
  if (out.empty()) return absl::InvalidArgumentError("empty command: name the program to run");
  return out;
}

std::string QuoteWord(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string JoinCommand(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& word : argv) {
    if (!out.empty()) out += ' ';
    out += QuoteWord(word);
  }
  return out;
}

}  // namespace perfgate
