// Escaping of text from a report for the markup it is written into, from one
// table: what Markdown (a table cell or a paragraph of a pull-request
// comment) and XML (content and attribute values of the JUnit file) each
// replace a character with.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace perfgate::report {

enum class Markup { kMarkdown, kXml };

/// `text` with every character the markup treats specially replaced: for
/// Markdown, HTML's &, <, > as entities, Markdown's punctuation
/// backslash-escaped and line breaks as spaces (a newline would end a table
/// row); for XML, the five entities, line breaks and tabs as character
/// references (kept through attribute-value normalisation), and the control
/// characters XML 1.0 forbids as '?'.
std::string Escape(absl::string_view text, Markup markup);

/// Escape(text, Markup::kMarkdown).
inline std::string EscapeMarkdown(absl::string_view text) { return Escape(text, Markup::kMarkdown); }
/// Escape(text, Markup::kXml).
inline std::string EscapeXml(absl::string_view text) { return Escape(text, Markup::kXml); }

}  // namespace perfgate::report
