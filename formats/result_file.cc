// Result files: the format is told from the content and the reader of that
// format (one file each in this folder) walks it; writing is atomic.
#include "formats/result_file.h"

#include <cstdio>
#include <ctime>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/file_io.h"
#include "common/status_macros.h"
#include "formats/format_registry.h"
#include "formats/json_fields.h"
#include "formats/perfgate_results.h"

namespace perfgate {

namespace {

// A reader's set, named after its format.
ResultSet Named(ResultSet set, const formats::Format* format) {
  set.format = format->name;
  return set;
}

absl::Status UnknownFormat(const std::string& name) {
  return absl::InvalidArgumentError(absl::StrCat(name, ": unknown format: ", formats::AcceptedFormats()));
}

// The reader of a parsed JSON document: the named format's, else the first
// whose shape the document has.
absl::StatusOr<ResultSet> ReadJson(const formats::json& root, const std::string& name,
                                   const formats::Format* format) {
  if (format != nullptr) return format->read_json(root, name);
  if (root.is_object()) {
    for (const formats::Format* f : formats::Formats()) {
      if (f->looks_like_json != nullptr && f->looks_like_json(root)) return Named(f->read_json(root, name), f);
    }
  }
  return UnknownFormat(name);
}

// The text as JSON. Google Benchmark's entries are read while they are
// parsed (ParseJson) unless another format is named.
absl::StatusOr<ResultSet> ParseAndReadJson(const std::string& text, const std::string& name,
                                           const formats::Format* format) {
  formats::json root;
  std::optional<ResultSet> google_benchmark;
  try {
    // Most files hold no bare NaN or Infinity: parsed as they are, uncopied.
    std::string quoted;
    const std::string* parsed = &text;
    if (text.find("NaN") != std::string::npos || text.find("Infinity") != std::string::npos) {
      quoted = formats::QuoteNonFinite(text);
      parsed = &quoted;
    }
    const bool streamed = format == nullptr || std::string_view(format->name) == kFormatGoogleBenchmark;
    root = streamed ? formats::ParseJson(*parsed, &google_benchmark) : formats::json::parse(*parsed);
  } catch (const formats::json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": not valid JSON", e.byte >= text.size() ? " (the file ends early: truncated?)" : "", ": ", e.what()));
  } catch (const formats::json::exception& e) {
    // out_of_range: a number beyond double's range (1e400) and the like.
    return absl::InvalidArgumentError(absl::StrCat(name, ": not readable JSON: ", e.what()));
  }
  if (google_benchmark) return *std::move(google_benchmark);
  return ReadJson(root, name, format);
}

absl::StatusOr<ResultSet> Dispatch(const std::string& text, const std::string& name,
                                   const formats::Format* format) {
  if (format != nullptr && format->read_text != nullptr) return format->read_text(text, name);
  const size_t first = text.find_first_not_of(" \t\r\n");
  const bool json_like = first != std::string::npos && (text[first] == '{' || text[first] == '[');
  if (!json_like && format == nullptr) {
    for (const formats::Format* f : formats::Formats()) {
      if (f->looks_like_text != nullptr && f->looks_like_text(text)) return Named(f->read_text(text, name), f);
    }
    return UnknownFormat(name);
  }
  // perfgate's own files, the large ones, go straight to simdjson: no
  // QuoteNonFinite (perfgate never writes NaN) and no nlohmann tree.
  if (format == nullptr || std::string_view(format->name) == kFormatPerfgate) {
    if (auto set = formats::ReadPerfgateText(text, name)) return *std::move(set);
  }
  return ParseAndReadJson(text, name, format);
}

}  // namespace

std::vector<std::string> ResultFormatNames() {
  std::vector<std::string> names;
  for (const formats::Format* f : formats::Formats()) names.push_back(f->name);
  return names;
}

absl::Status CheckResultFormat(const std::string& format) {
  if (format.empty() || formats::FindFormat(format) != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("unknown result format '", format, "': expected one of ",
                                                 absl::StrJoin(ResultFormatNames(), ", ")));
}

absl::StatusOr<ResultSet> ParseResultText(const std::string& text, const std::string& name,
                                          const std::string& format) {
  PERFGATE_RETURN_IF_ERROR(CheckResultFormat(format));
  const formats::Format* named = format.empty() ? nullptr : formats::FindFormat(format);
  try {
    auto set = Dispatch(text, name, named);
    // `compare` would judge, and `ingest` send, what the coordinator refuses.
    if (set.ok()) {
      if (named != nullptr) set->format = named->name;
      if (absl::Status s = CheckSampleIndicesOnce(set->cases); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(name, ": ", s.message()));
      }
    }
    return set;
  } catch (const formats::FormatError& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", e.path.empty() ? "" : e.path + ": ", e.what));
  } catch (const formats::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", e.what()));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cannot be read: ", e.what()));
  }
}

absl::StatusOr<ResultSet> ReadResultFile(const std::string& path, const std::string& format) {
  // Room for the padding simdjson reads past the text's end, so that the
  // text goes to the parser uncopied.
  auto text = ReadWholeFile(path, formats::kParsePadding);
  PERFGATE_RETURN_IF_ERROR(text);
  return ParseResultText(*text, path, format);
}

absl::Status WriteResultFile(const std::string& path, const RunMeta& meta, const std::vector<CaseResult>& cases) {
  return WriteFileAtomically(path, WriteResultJson(meta, cases));
}

std::string FormatUtcTime(TimePoint t) {
  const std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

absl::StatusOr<TimePoint> ParseUtcTime(const std::string& text) {
  std::tm tm{};
  char z = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z) != 7 ||
      z != 'Z') {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a UTC time like 2026-01-31T12:00:00Z"));
  }
  // Years past 2261 do not fit a nanosecond clock; a field out of range
  // (a 31 February, an hour 25) is not a time: timegm would roll it over.
  const std::tm asked = tm;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t secs = timegm(&tm);
  std::tm back{};
  if (asked.tm_year < 1970 || asked.tm_year > 2200 || gmtime_r(&secs, &back) == nullptr ||
      back.tm_year + 1900 != asked.tm_year || back.tm_mon + 1 != asked.tm_mon || back.tm_mday != asked.tm_mday ||
      back.tm_hour != asked.tm_hour || back.tm_min != asked.tm_min || back.tm_sec != asked.tm_sec) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is out of range: a UTC time from 1970 to 2200 like 2026-01-31T12:00:00Z"));
  }
  return std::chrono::system_clock::from_time_t(secs);
}

}  // namespace perfgate
