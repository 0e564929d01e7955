// Result files: the format is told from the content and the reader of that
// format (one file each in this folder) walks it; writing is atomic.
#include "formats/result_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "formats/json_fields.h"
#include "formats/perfgate_results.h"

namespace perfgate {

namespace {

// Every format, how it is produced, and what tells it apart.
constexpr char kAcceptedFormats[] =
    "expected one of: a perfgate result file (perfgate-agent run --output F: \"format\": \"perfgate-results\"); "
    "Google Benchmark JSON (--benchmark_format=json or --benchmark_out=F: \"benchmarks\"[].\"name\"); "
    "nvbench JSON (--json F: \"devices\" and \"benchmarks\"[].\"states\"); "
    "pytest-benchmark JSON (pytest --benchmark-json=F: \"machine_info\" and \"benchmarks\"[].\"stats\"); "
    "hyperfine JSON (hyperfine --export-json F: \"results\"[].\"command\"); "
    "nccl-tests output (all_reduce_perf ... > F: the \"# size count type ... time algbw busbw\" table); "
    "Bencher Metric Format JSON ({\"bench\": {\"measure\": {\"value\": v}}})";

bool FirstEntryHas(const formats::json& root, const char* list, const char* key) {
  auto it = root.find(list);
  return it != root.end() && it->is_array() && !it->empty() && (*it)[0].is_object() && (*it)[0].contains(key);
}

// The reader of a parsed JSON document, by what its content shows.
absl::StatusOr<ResultSet> ReadJson(const formats::json& root, const std::string& name) {
  if (root.is_object()) {
    auto format = root.find("format");
    if (format != root.end() && format->is_string() && format->get<std::string>() == formats::kPerfgateFormatTag) {
      return formats::ReadPerfgate(root);
    }
    const bool benchmarks = root.contains("benchmarks");
    if (benchmarks && (root.contains("machine_info") || FirstEntryHas(root, "benchmarks", "stats"))) {
      return formats::ReadPytestBenchmark(root);
    }
    if (benchmarks && (root.contains("devices") || FirstEntryHas(root, "benchmarks", "states"))) {
      return formats::ReadNvbench(root, name);
    }
    if (benchmarks && (root.contains("context") || FirstEntryHas(root, "benchmarks", "name"))) {
      return formats::ReadGoogleBenchmark(root);
    }
    if (root.contains("results") &&
        (FirstEntryHas(root, "results", "command") || FirstEntryHas(root, "results", "times"))) {
      return formats::ReadHyperfine(root);
    }
    if (formats::LooksLikeBencher(root)) return formats::ReadBencher(root);
  }
  return absl::InvalidArgumentError(absl::StrCat(name, ": unknown format: ", kAcceptedFormats));
}

absl::StatusOr<ResultSet> Dispatch(const std::string& text, const std::string& name) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  const bool json_like = first != std::string::npos && (text[first] == '{' || text[first] == '[');
  if (!json_like) {
    if (formats::LooksLikeNcclTests(text)) return formats::ReadNcclTests(text);
    return absl::InvalidArgumentError(absl::StrCat(name, ": unknown format: ", kAcceptedFormats));
  }
  // perfgate's own files, the large ones, go straight to simdjson: no
  // QuoteNonFinite (perfgate never writes NaN) and no nlohmann tree.
  if (auto set = formats::ReadPerfgateText(text, name)) return *std::move(set);
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
    root = formats::ParseJson(*parsed, &google_benchmark);
  } catch (const formats::json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": not valid JSON", e.byte >= text.size() ? " (the file ends early: truncated?)" : "", ": ", e.what()));
  } catch (const formats::json::exception& e) {
    // out_of_range: a number beyond double's range (1e400) and the like.
    return absl::InvalidArgumentError(absl::StrCat(name, ": not readable JSON: ", e.what()));
  }
  if (google_benchmark) return *std::move(google_benchmark);
  return ReadJson(root, name);
}

}  // namespace

absl::StatusOr<ResultSet> ParseResultText(const std::string& text, const std::string& name) {
  try {
    auto set = Dispatch(text, name);
    // `compare` would judge, and `ingest` send, what the coordinator refuses.
    if (set.ok()) {
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

absl::StatusOr<ResultSet> ReadResultFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  // Room for the text and the padding simdjson reads past its end, so
  // that the text goes to the parser uncopied.
  std::string text;
  std::error_code size_unknown;  // a pipe: the text grows as it comes
  const auto size = std::filesystem::file_size(path, size_unknown);
  text.reserve((size_unknown ? 0 : size) + formats::kParsePadding);
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) text.append(chunk, static_cast<size_t>(in.gcount()));
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return ParseResultText(text, path);
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

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = absl::StrCat(path, ".tmp.", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::UnavailableError(absl::StrCat("cannot write ", tmp, ": ", std::strerror(errno)));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("cannot rename ", tmp, " to ", path, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace perfgate
