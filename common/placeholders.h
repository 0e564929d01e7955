// The placeholders of the command templates a user writes, each with one
// meaning wherever it appears, and the one way they are replaced: word by
// word of an argument vector, never through a shell.
//
//   {out}       the result file a benchmark command writes (perfgate-agent
//               ab's --baseline-cmd/--candidate-cmd, perfgate bisect --cmd)
//   {samples}   the repetitions each case of a block makes
//   {commit}    the commit being built or measured (perfgate bisect)
//   {artifact}  that commit's build: the folder --build fills, or the
//               --artifact path (perfgate bisect)
//   {image}     an image's name@sha256:digest (perfgate bisect with images)
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgate {

inline constexpr char kOutPlaceholder[] = "{out}";
inline constexpr char kSamplesPlaceholder[] = "{samples}";
inline constexpr char kCommitPlaceholder[] = "{commit}";
inline constexpr char kArtifactPlaceholder[] = "{artifact}";
inline constexpr char kImagePlaceholder[] = "{image}";

/// A placeholder and what it stands for in one expansion.
using PlaceholderValues = std::vector<std::pair<std::string, std::string>>;

/// Each word of `argv` with every placeholder of `values` replaced (one
/// pass: a value that holds a placeholder's name is not replaced again).
std::vector<std::string> ExpandPlaceholders(std::vector<std::string> argv, const PlaceholderValues& values);
/// The same for one text (a path template).
std::string ExpandPlaceholders(const std::string& text, const PlaceholderValues& values);

/// Whether any word of `argv`, or the text, names `placeholder`.
bool NamesPlaceholder(const std::vector<std::string>& argv, std::string_view placeholder);
bool NamesPlaceholder(std::string_view text, std::string_view placeholder);

}  // namespace perfgate
