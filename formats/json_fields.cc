#include "formats/json_fields.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "common/stats.h"

namespace perfgate::formats {

[[noreturn]] void Throw(const std::string& path, const std::string& what) { throw FormatError{path, what}; }

std::string Member(const std::string& path, const std::string& key) {
  return path.empty() ? key : absl::StrCat(path, ".", key);
}

std::string Index(const std::string& path, size_t i) { return absl::StrCat(path, "[", i, "]"); }

const json& Field(const json& obj, const std::string& path, const std::string& key) {
  if (!obj.is_object()) Throw(path, "not an object");
  auto it = obj.find(key);
  if (it == obj.end()) Throw(Member(path, key), "missing");
  return *it;
}

const json* OptionalField(const json& obj, const std::string& path, const std::string& key) {
  if (!obj.is_object()) Throw(path, "not an object");
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json& ResultList(const json& root, const std::string& key) {
  const json& list = Array(Field(root, "", key), key);
  if (list.empty()) Throw(key, "empty: the file holds no results");
  return list;
}

std::string String(const json& v, const std::string& path) {
  if (!v.is_string()) Throw(path, absl::StrCat("not a string (", v.type_name(), ")"));
  return v.get<std::string>();
}

const json& Array(const json& v, const std::string& path) {
  if (!v.is_array()) Throw(path, absl::StrCat("not an array (", v.type_name(), ")"));
  return v;
}

bool Bool(const json& v, const std::string& path) {
  if (!v.is_boolean()) Throw(path, absl::StrCat("not true or false (", v.type_name(), ")"));
  return v.get<bool>();
}

namespace {

// The words QuoteNonFinite marks (with a leading \x01) inside strings.
constexpr const char* kNonFinite[] = {"-Infinity", "Infinity", "NaN"};

}  // namespace

bool IsNonFiniteMark(const json& v) {
  if (!v.is_string()) return false;
  for (const char* word : kNonFinite) {
    if (v.get<std::string>() == absl::StrCat("\x01", word)) return true;
  }
  return false;
}

double Number(const json& v, const std::string& path) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    for (const char* word : kNonFinite) {
      if (v.get<std::string>() == absl::StrCat("\x01", word)) Throw(path, absl::StrCat("is ", word, ", not a number"));
    }
  }
  Throw(path, absl::StrCat("not a number (", v.type_name(), ")"));
}

double NumberOrNumericString(const json& v, const std::string& path) {
  if (v.is_string()) {
    double d = 0;
    if (!absl::SimpleAtod(v.get<std::string>(), &d)) {
      Throw(path, absl::StrCat("'", v.get<std::string>(), "' is not a number"));
    }
    return d;
  }
  return Number(v, path);
}

double PositiveFinite(double d, const std::string& path, const char* what) {
  if (!std::isfinite(d) || d <= 0) Throw(path, absl::StrCat(d, " is not a positive ", what));
  return d;
}

bool FirstEntryHas(const json& root, const char* list, const char* key) {
  auto it = root.find(list);
  return it != root.end() && it->is_array() && !it->empty() && (*it)[0].is_object() && (*it)[0].contains(key);
}

std::string Text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string QuoteNonFinite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    for (const char* word : kNonFinite) {
      const size_t n = std::strlen(word);
      if (text.compare(i, n, word) == 0) {
        absl::StrAppend(&out, "\"\\u0001", word, "\"");
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

std::string Token(const std::string& s) {
  std::string out = s.substr(0, kMaxBenchmarkToken);
  for (char& c : out) {
    if (!BenchmarkValueChar(c) || c == '/') c = '_';
  }
  return out.empty() ? std::string("_") : out;
}

std::string MetricToken(const std::string& s) {
  std::string out = s.substr(0, 128);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '/' || c == '{' || c == '}' || c == ',' ||
        c == '=') {
      c = '_';
    }
  }
  return out.empty() ? std::string("_") : out;
}

std::string NameToken(const std::string& s) {
  std::string out = s.substr(0, kMaxBenchmarkToken);
  if (out.empty()) out = "_";
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  }
  return out;
}

Direction CounterDirection(const std::string& name) {
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  auto ends = [&](const char* suffix) {
    const size_t n = std::strlen(suffix);
    return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
  };
  const bool rate = has("per_second") || has("rate") || has("throughput");
  const bool cost = has("time") || has("latency") || has("duration") || has("alloc") || has("bytes_used") ||
                    has("rss") || ends("_ns") || ends("_us") || ends("_ms") || ends("_s") || ends("_sec");
  return cost && !rate ? Direction::kLowerIsBetter : Direction::kHigherIsBetter;
}

std::string GpuSkuFromName(const std::string& device_name) {
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  // A SKU perfgate knows by that name ("NVIDIA H200"), at one of its sizes.
  const std::vector<std::string>& known = KnownSkuExamples();
  for (long gb : {16, 24, 32, 40, 48, 80, 94, 96, 141, 144, 180, 192}) {
    const std::string key = GpuSkuKey(device_name, static_cast<uint64_t>(static_cast<double>(gb) * kGiB));
    if (std::find(known.begin(), known.end(), key) != known.end()) return key;
  }
  // Else the size the name states ("NVIDIA RTX 6000 Ada 48GB").
  for (size_t at = device_name.find("GB"); at != std::string::npos; at = device_name.find("GB", at + 2)) {
    size_t start = at;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(device_name[start - 1]))) --start;
    long gb = 0;
    if (start < at && absl::SimpleAtoi(device_name.substr(start, at - start), &gb) && gb > 0 && gb < 4096) {
      return GpuSkuKey(device_name, static_cast<uint64_t>(static_cast<double>(gb) * kGiB));
    }
  }
  return "";
}

double NoiseOfFirstMetric(const CaseResult& c) {
  std::vector<double> v;
  for (const Sample& s : c.samples) {
    if (!s.throttled && !s.values.empty()) v.push_back(s.values[0]);
  }
  return v.size() >= 2 ? stats::Noise(v) : 0.0;
}

}  // namespace perfgate::formats
