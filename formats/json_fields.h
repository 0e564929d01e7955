// What the result-file readers share (formats/ only): a walk over a JSON
// document that names the path of whatever it finds wrong. A reader throws
// FormatError; ParseResultJson (result_file.cc) turns it into a status, so
// that each reader stays a plain walk over the document.
#pragma once

#include <cstddef>
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

/// The readers, one per format (perfgate_results.cc, google_benchmark.cc,
/// nvbench.cc). `json_path` locates nvbench's sample-time files.
ResultSet ReadPerfgate(const json& root);
ResultSet ReadGoogleBenchmark(const json& root);
ResultSet ReadNvbench(const json& root, const std::string& json_path);

/// The "cases" entry perfgate's own file holds for one case.
ojson ToJson(const CaseResult& c);

}  // namespace perfgate::formats
