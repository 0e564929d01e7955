#include "report/escape.h"

namespace perfgate::report {
namespace {

// A character's replacement in each markup; nullptr: kept as it is.
struct Replacement {
  char c;
  const char* markdown;
  const char* xml;
};

constexpr Replacement kReplacements[] = {
    {'&', "&amp;", "&amp;"},  {'<', "&lt;", "&lt;"},  {'>', "&gt;", "&gt;"},
    {'"', nullptr, "&quot;"}, {'\'', nullptr, "&apos;"},
    {'\n', " ", "&#10;"},     {'\r', " ", "&#13;"},   {'\t', nullptr, "&#9;"},
    {'|', "\\|", nullptr},    {'\\', "\\\\", nullptr}, {'`', "\\`", nullptr},
    {'*', "\\*", nullptr},    {'_', "\\_", nullptr},  {'[', "\\[", nullptr},
    {']', "\\]", nullptr},    {'#', "\\#", nullptr},
};

const char* ReplacementOf(char c, Markup markup) {
  for (const Replacement& r : kReplacements) {
    if (r.c == c) return markup == Markup::kMarkdown ? r.markdown : r.xml;
  }
  return nullptr;
}

}  // namespace

std::string Escape(absl::string_view text, Markup markup) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (const char* r = ReplacementOf(c, markup); r != nullptr) {
      out += r;
    } else if (markup == Markup::kXml && static_cast<unsigned char>(c) < 0x20) {
      out += '?';  // XML 1.0 forbids most control characters; they cannot be escaped
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace perfgate::report
