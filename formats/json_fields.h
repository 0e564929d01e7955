// What the result-file readers share (formats/ only): a walk over a JSON
// document that names the path of whatever it finds wrong. A reader throws
// FormatError; ParseResultText (result_file.cc) turns it into a status, so
// that each reader stays a plain walk over the document. The one text format
// (nccl-tests) throws the same error with "line N" as its path.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "common/run_types.h"
#include "formats/result_file.h"

namespace perfgate::formats {

using nlohmann::json;
// The writer keeps keys in a reading order.
using ojson = nlohmann::ordered_json;

/// Value of a perfgate result file's "format" key, and its version.
inline constexpr char kPerfgateFormatTag[] = "perfgate-results";
inline constexpr int kPerfgateVersion = 1;

/// What a file got wrong, at which JSON path.
struct FormatError {
  std::string path;
  std::string what;
};

[[noreturn]] void Throw(const std::string& path, const std::string& what);

/// "path.key" ("key" at the root) and "path[i]".
std::string Member(const std::string& path, const std::string& key);
std::string Index(const std::string& path, size_t i);

/// A required member of an object; an optional one (nullptr when absent).
const json& Field(const json& obj, const std::string& path, const std::string& key);
const json* OptionalField(const json& obj, const std::string& path, const std::string& key);

/// The root's list `key` (a result file's "benchmarks", "results"): an array
/// with at least one entry, or FormatError saying the file holds no results.
const json& ResultList(const json& root, const std::string& key);

/// Values of one type, or FormatError naming the path and what was there.
std::string String(const json& v, const std::string& path);
const json& Array(const json& v, const std::string& path);
bool Bool(const json& v, const std::string& path);
/// A number; NaN and Infinity (which QuoteNonFinite marked) are refused by name.
double Number(const json& v, const std::string& path);
/// nvbench writes its values as strings ("0.00123") so int64s survive JSON;
/// older versions wrote numbers. Both are accepted.
double NumberOrNumericString(const json& v, const std::string& path);
/// d itself when finite and > 0; else FormatError "<d> is not a positive <what>".
double PositiveFinite(double d, const std::string& path, const char* what);
/// True for a NaN or Infinity that QuoteNonFinite marked.
bool IsNonFiniteMark(const json& v);

/// Scalars as text; arrays and objects as compact JSON.
std::string Text(const json& v);

/// Google Benchmark writes non-finite doubles as the bare words NaN and
/// Infinity, which are not JSON: this replaces them, outside strings, by
/// marked strings, so the document parses and the field can be refused by name.
std::string QuoteNonFinite(const std::string& text);

/// A parameter value in the key grammar (common/identity.h): characters
/// outside it, and '/', become '_'; cut to 128 characters.
std::string Token(const std::string& s);
/// A metric name: control characters and / { } , = become '_'; cut to 128.
std::string MetricToken(const std::string& s);
/// Benchmark names additionally stay within what ParseBenchmarkKey accepts.
std::string NameToken(const std::string& s);

/// The relative spread of a case's first metric over its unthrottled samples.
double NoiseOfFirstMetric(const CaseResult& c);

/// Which way a metric a tool names freely (a user counter, a Bencher
/// measure) improves: upwards (a rate, a count of work done) unless its name
/// says it is a time or a cost — it contains time, latency, duration, alloc,
/// bytes_used or rss, or ends in _ns, _us, _ms, _s or _sec — and does not
/// say it is a rate (per_second, rate, throughput).
Direction CounterDirection(const std::string& name);

/// A GPU's SKU key from its name alone (nccl-tests prints no memory size):
/// the size the name states ("80GB"), else a known SKU of that name; "" when
/// neither tells.
std::string GpuSkuFromName(const std::string& device_name);

/// Parses a JSON document. The entries of a Google Benchmark file's
/// "benchmarks" list are read as they are parsed and dropped from the tree (a
/// tree of 2·10^6 repetitions takes 8 times the file's size): the result set
/// is then in *google_benchmark, and the root returned holds the rest. Any
/// other document is returned whole. Throws json::exception on bad JSON and
/// FormatError on a bad entry.
json ParseJson(const std::string& text, std::optional<ResultSet>* google_benchmark);

/// True when the root's list `list` is an array whose first entry is an
/// object holding `key`: what tells most formats apart.
bool FirstEntryHas(const json& root, const char* list, const char* key);

/// The "cases" entry perfgate's own file holds for one case.
ojson ToJson(const CaseResult& c);

}  // namespace perfgate::formats
