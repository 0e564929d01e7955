// Command lines given as one string (a side of `perfgate-agent ab`, a build
// template of `perfgate bisect`): split into an argument vector with the
// shell's quoting rules but never through a shell, and argument vectors
// written back as one such string that splits into the same words.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace perfgate {

/// Splits a command line into arguments with the shell's quoting rules but
/// no shell: blanks separate, '...' is literal, "..." keeps blanks and takes
/// \" \\ \$ \` as escapes, and a backslash outside quotes escapes the next
/// character. INVALID_ARGUMENT for an unterminated quote, a trailing
/// backslash or an empty command.
absl::StatusOr<std::vector<std::string>> SplitCommand(const std::string& command);

/// `word` in single quotes (a quote inside as '\''), so that SplitCommand
/// gives it back as one word whatever it holds.
std::string QuoteWord(const std::string& word);

/// Every word of argv quoted (QuoteWord) and joined by blanks: SplitCommand
/// of the result is argv again.
std::string JoinCommand(const std::vector<std::string>& argv);

}  // namespace perfgate
