#include "common/result_file.h"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/identity.h"
#include "common/stats.h"

namespace perfgate {
namespace {

using nlohmann::json;
// The writer keeps keys in a reading order.
using ojson = nlohmann::ordered_json;

constexpr char kPerfgateFormatTag[] = "perfgate-results";
constexpr int kPerfgateVersion = 1;

// What a file got wrong, at which JSON path. Thrown inside this file only and
// turned into a status at ParseResultJson, so that the readers stay a plain
// walk over the document.
struct FormatError {
  std::string path;
  std::string what;
};

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

// Google Benchmark writes non-finite doubles as the bare words NaN and
// Infinity, which are not JSON; Quote() turns them into these strings so the
// document parses and the field can be refused by name.
constexpr const char* kNonFinite[] = {"-Infinity", "Infinity", "NaN"};

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

// nvbench writes its values as strings ("0.00123") so int64s survive JSON;
// older versions wrote numbers. Both are accepted.
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

// Scalars as text; arrays and objects as compact JSON.
std::string Text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// Replaces the bare words NaN, Infinity and -Infinity outside strings by
// marked strings (see Number()).
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

// Names on the wire may not hold / { } , = (they build benchmark keys).
std::string Token(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == '/' || c == '{' || c == '}' || c == ',' || c == '=') c = '_';
  }
  return out;
}

// Benchmark names additionally stay within what ParseBenchmarkKey accepts.
std::string NameToken(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
  }
  return out;
}

double NoiseOfFirstMetric(const CaseResult& c) {
  std::vector<double> v;
  for (const Sample& s : c.samples) {
    if (!s.throttled && !s.values.empty()) v.push_back(s.values[0]);
  }
  return v.size() >= 2 ? stats::Noise(v) : 0.0;
}

// ---------------------------------------------------------------------------
// perfgate's own file.

TimePoint ParseTime(const std::string& s, const std::string& path) {
  auto t = ParseUtcTime(s);
  if (!t.ok()) Throw(path, std::string(t.status().message()));
  return *t;
}

ResultSet ReadPerfgate(const json& root) {
  const json& version = Field(root, "", "version");
  if (!version.is_number_integer() || version.get<int64_t>() != kPerfgateVersion) {
    Throw("version", absl::StrCat(Text(version), " is not a version this perfgate reads (", kPerfgateVersion, ")"));
  }
  ResultSet set;
  set.format = kFormatPerfgate;
  const json& run = Field(root, "", "run");
  set.sku = String(Field(run, "run", "sku"), "run.sku");
  const json& env = Field(run, "run", "environment");
  if (!env.is_object()) Throw("run.environment", "not an object");
  for (const auto& [k, v] : env.items()) set.context[k] = String(v, Member("run.environment", k));
  for (const char* key : {"run_id", "agent_name", "repo", "branch", "commit", "trigger", "ci_job", "node",
                          "started_at"}) {
    if (const json* v = OptionalField(run, "run", key)) {
      set.context[absl::StrCat(kRunContextPrefix, key)] = String(*v, Member("run", key));
    }
  }
  if (const json* v = OptionalField(run, "run", "started_at")) ParseTime(String(*v, "run.started_at"), "run.started_at");

  const json& cases = Array(Field(root, "", "cases"), "cases");
  std::set<std::string> keys;
  for (size_t i = 0; i < cases.size(); ++i) {
    const std::string path = Index("cases", i);
    const json& c = cases[i];
    CaseResult r;
    const json& b = Field(c, path, "benchmark");
    const std::string bpath = Member(path, "benchmark");
    r.benchmark.suite = String(Field(b, bpath, "suite"), Member(bpath, "suite"));
    r.benchmark.name = String(Field(b, bpath, "name"), Member(bpath, "name"));
    if (const json* params = OptionalField(b, bpath, "params")) {
      if (!params->is_object()) Throw(Member(bpath, "params"), "not an object");
      for (const auto& [k, v] : params->items()) {
        r.benchmark.params[k] = String(v, absl::StrCat(bpath, ".params.", k));
      }
    }
    if (!keys.insert(r.benchmark.Key()).second) Throw(path, absl::StrCat(r.benchmark.Key(), " appears twice"));
    const std::string status = String(Field(c, path, "status"), Member(path, "status"));
    if (!ParseCaseStatus(status, &r.status)) Throw(Member(path, "status"), absl::StrCat("unknown status '", status, "'"));
    if (const json* v = OptionalField(c, path, "reason")) r.reason = String(*v, Member(path, "reason"));
    if (const json* v = OptionalField(c, path, "noise")) r.noise = Number(*v, Member(path, "noise"));
    if (const json* v = OptionalField(c, path, "seconds")) r.seconds = Number(*v, Member(path, "seconds"));
    const json& metrics = Array(Field(c, path, "metrics"), Member(path, "metrics"));
    for (size_t m = 0; m < metrics.size(); ++m) {
      const std::string mpath = Index(Member(path, "metrics"), m);
      MetricSpec spec;
      spec.name = String(Field(metrics[m], mpath, "name"), Member(mpath, "name"));
      spec.unit = String(Field(metrics[m], mpath, "unit"), Member(mpath, "unit"));
      const std::string dir = String(Field(metrics[m], mpath, "direction"), Member(mpath, "direction"));
      if (!ParseDirection(dir, &spec.direction)) {
        Throw(Member(mpath, "direction"), absl::StrCat("'", dir, "' is neither higher_is_better nor lower_is_better"));
      }
      r.metrics.push_back(spec);
    }
    const json& samples = Array(Field(c, path, "samples"), Member(path, "samples"));
    for (size_t s = 0; s < samples.size(); ++s) {
      const std::string spath = Index(Member(path, "samples"), s);
      Sample sample;
      const json& index = Field(samples[s], spath, "index");
      if (!index.is_number_unsigned()) Throw(Member(spath, "index"), "not a non-negative integer");
      sample.index = index.get<uint32_t>();
      if (const json* t = OptionalField(samples[s], spath, "throttled")) sample.throttled = Bool(*t, Member(spath, "throttled"));
      const json& values = Array(Field(samples[s], spath, "values"), Member(spath, "values"));
      if (values.size() != r.metrics.size()) {
        Throw(Member(spath, "values"), absl::StrCat(values.size(), " values for ", r.metrics.size(), " metrics"));
      }
      for (size_t v = 0; v < values.size(); ++v) {
        const double d = Number(values[v], Index(Member(spath, "values"), v));
        if (!std::isfinite(d)) Throw(Index(Member(spath, "values"), v), "not finite");
        sample.values.push_back(d);
      }
      r.samples.push_back(std::move(sample));
    }
    set.cases.push_back(std::move(r));
  }
  return set;
}

// ---------------------------------------------------------------------------
// Google Benchmark (src/json_reporter.cc).

// Keys of a benchmarks[] entry that are not counters.
const std::set<std::string>& GbenchFixedKeys() {
  static const std::set<std::string> kKeys = {
      "name",           "family_index",  "per_family_instance_index", "run_name",
      "run_type",       "repetitions",   "repetition_index",          "threads",
      "aggregate_name", "aggregate_unit", "error_occurred",           "error_message",
      "iterations",     "real_time",     "cpu_time",                  "time_unit",
      "label",          "cpu_coefficient", "real_coefficient",        "big_o",
      "rms",            "skipped"};
  return kKeys;
}

bool Contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }
bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// A user counter improves upwards (a rate, a count of work done) unless its
// name says it is a time or a cost: it contains time, latency, duration,
// alloc or bytes_used, or ends in _ns, _us, _ms, _s or _sec — and does not
// say it is a rate (per_second, rate, throughput).
Direction CounterDirection(const std::string& name) {
  const bool rate = Contains(name, "per_second") || Contains(name, "rate") || Contains(name, "throughput");
  const bool cost = Contains(name, "time") || Contains(name, "latency") || Contains(name, "duration") ||
                    Contains(name, "alloc") || Contains(name, "bytes_used") || EndsWith(name, "_ns") ||
                    EndsWith(name, "_us") || EndsWith(name, "_ms") || EndsWith(name, "_s") ||
                    EndsWith(name, "_sec");
  return cost && !rate ? Direction::kLowerIsBetter : Direction::kHigherIsBetter;
}

// "BM_Copy/4096/real_time/threads:2" -> gbench/BM_Copy{a0=4096,threads=2,timer=real_time}.
BenchmarkId GbenchId(const std::string& run_name) {
  BenchmarkId id;
  id.suite = "gbench";
  size_t start = 0;
  size_t positional = 0;
  bool first = true;
  while (start <= run_name.size()) {
    size_t slash = run_name.find('/', start);
    if (slash == std::string::npos) slash = run_name.size();
    const std::string part = run_name.substr(start, slash - start);
    start = slash + 1;
    if (first) {
      id.name = NameToken(part);
      first = false;
      continue;
    }
    if (part.empty()) continue;
    const size_t colon = part.find(':');
    if (part == "real_time" || part == "manual_time" || part == "process_time") {
      std::string& timer = id.params["timer"];
      timer = timer.empty() ? part : absl::StrCat(timer, "+", part);
    } else if (colon != std::string::npos && colon > 0) {
      id.params[Token(part.substr(0, colon))] = Token(part.substr(colon + 1));
    } else {
      id.params[absl::StrCat("a", positional++)] = Token(part);
    }
  }
  if (id.name.empty()) id.name = "unnamed";
  return id;
}

struct GbenchCase {
  CaseResult result;
  std::string first_path;  // where the case's metrics were first seen
  size_t iterations = 0;
  size_t aggregates = 0;
};

ResultSet ReadGoogleBenchmark(const json& root) {
  ResultSet set;
  set.format = kFormatGoogleBenchmark;
  const json& context = Field(root, "", "context");
  if (!context.is_object()) Throw("context", "not an object");
  for (const auto& [k, v] : context.items()) set.context[k] = Text(v);
  // Google Benchmark records no CPU model; a program that adds one with
  // benchmark::AddCustomContext("cpu_model", ...) gets a SKU.
  if (auto model = set.context.find("cpu_model"); model != set.context.end()) {
    auto vendor = set.context.find("cpu_vendor");
    set.sku = CpuSkuKey(vendor == set.context.end() ? "" : vendor->second, model->second);
  }

  const json& benchmarks = Array(Field(root, "", "benchmarks"), "benchmarks");
  if (benchmarks.empty()) Throw("benchmarks", "empty: the file holds no results");
  std::vector<GbenchCase> cases;
  std::map<std::string, size_t> by_run_name;
  std::map<std::string, std::string> run_name_of_key;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const std::string path = Index("benchmarks", i);
    const json& b = benchmarks[i];
    const std::string run_name = String(Field(b, path, "run_name"), Member(path, "run_name"));
    auto [it, added] = by_run_name.try_emplace(run_name, cases.size());
    if (added) {
      GbenchCase c;
      c.result.benchmark = GbenchId(run_name);
      auto [other, fresh] = run_name_of_key.try_emplace(c.result.benchmark.Key(), run_name);
      if (!fresh) {
        Throw(Member(path, "run_name"), absl::StrCat("'", run_name, "' and '", other->second,
                                                     "' both map to ", c.result.benchmark.Key()));
      }
      c.first_path = path;
      cases.push_back(std::move(c));
    }
    GbenchCase& c = cases[it->second];
    const std::string run_type = String(Field(b, path, "run_type"), Member(path, "run_type"));
    if (run_type == "aggregate") {
      ++c.aggregates;  // perfgate computes its own statistics from the repetitions
      continue;
    }
    if (run_type != "iteration") Throw(Member(path, "run_type"), absl::StrCat("'", run_type, "' is neither iteration nor aggregate"));
    ++c.iterations;

    const std::string unit = String(Field(b, path, "time_unit"), Member(path, "time_unit"));
    if (unit != "ns" && unit != "us" && unit != "ms" && unit != "s") {
      Throw(Member(path, "time_unit"), absl::StrCat("'", unit, "' is not one of ns, us, ms, s"));
    }
    bool error = false;
    if (const json* e = OptionalField(b, path, "error_occurred")) error = Bool(*e, Member(path, "error_occurred"));
    std::vector<MetricSpec> metrics = {{"real_time", unit, Direction::kLowerIsBetter},
                                       {"cpu_time", unit, Direction::kLowerIsBetter}};
    if (error) {
      c.result.status = CaseStatus::kFailed;
      if (const json* m = OptionalField(b, path, "error_message")) {
        c.result.reason = String(*m, Member(path, "error_message"));
      }
      if (c.result.reason.empty()) c.result.reason = "the benchmark reported an error";
      if (c.result.metrics.empty()) c.result.metrics = metrics;
      continue;
    }
    Sample sample;
    sample.index = static_cast<uint32_t>(c.result.samples.size());
    if (const json* r = OptionalField(b, path, "repetition_index")) {
      if (!r->is_number_unsigned()) Throw(Member(path, "repetition_index"), "not a non-negative integer");
      sample.index = r->get<uint32_t>();
    }
    sample.values.push_back(PositiveFinite(Number(Field(b, path, "real_time"), Member(path, "real_time")),
                                           Member(path, "real_time"), "time"));
    const double cpu = Number(Field(b, path, "cpu_time"), Member(path, "cpu_time"));
    if (!std::isfinite(cpu) || cpu < 0) Throw(Member(path, "cpu_time"), absl::StrCat(cpu, " is not a time"));
    sample.values.push_back(cpu);
    for (const auto& [key, value] : b.items()) {
      if (GbenchFixedKeys().count(key) != 0) continue;
      // Counters are numbers; a text field a later Google Benchmark adds is not one.
      if (!value.is_number() && !IsNonFiniteMark(value)) continue;
      const std::string vpath = Member(path, key);
      const double d = Number(value, vpath);
      if (!std::isfinite(d)) Throw(vpath, absl::StrCat(d, " is not finite"));
      if (key == "bytes_per_second") {
        metrics.push_back({"bytes_per_second", "GB/s", Direction::kHigherIsBetter});
        sample.values.push_back(d / 1e9);
      } else if (key == "items_per_second") {
        metrics.push_back({"items_per_second", "items/s", Direction::kHigherIsBetter});
        sample.values.push_back(d);
      } else if (key == "allocs_per_iter" || key == "max_bytes_used" || key == "total_allocated_bytes" ||
                 key == "net_heap_growth") {
        metrics.push_back({key, key == "allocs_per_iter" ? "allocs" : "bytes", Direction::kLowerIsBetter});
        sample.values.push_back(d);
      } else {
        metrics.push_back({Token(key), "counter", CounterDirection(key)});
        sample.values.push_back(d);
      }
    }
    if (c.result.metrics.empty() || c.result.samples.empty()) {
      c.result.metrics = metrics;
    } else if (c.result.metrics != metrics) {
      std::vector<std::string> now, before;
      for (const MetricSpec& m : metrics) now.push_back(absl::StrCat(m.name, " [", m.unit, "]"));
      for (const MetricSpec& m : c.result.metrics) before.push_back(absl::StrCat(m.name, " [", m.unit, "]"));
      Throw(path, absl::StrCat("reports ", absl::StrJoin(now, ", "), " where ", c.first_path, " of the same run_name '",
                               run_name, "' reported ", absl::StrJoin(before, ", ")));
    }
    c.result.samples.push_back(std::move(sample));
  }

  size_t iterations = 0;
  for (const GbenchCase& c : cases) iterations += c.iterations;
  for (const GbenchCase& c : cases) {
    if (c.iterations == 0) {
      Throw(iterations == 0 ? "benchmarks" : c.first_path,
            absl::StrCat(iterations == 0 ? "only aggregates (mean, median, stddev, ...)"
                                         : absl::StrCat("only aggregates for '", c.result.benchmark.Key(), "'"),
                         "; perfgate computes its own statistics from the repetitions: rerun without "
                         "--benchmark_report_aggregates_only"));
    }
  }
  for (GbenchCase& c : cases) {
    if (c.result.status == CaseStatus::kUnspecified) c.result.status = CaseStatus::kOk;
    c.result.noise = NoiseOfFirstMetric(c.result);
    set.cases.push_back(std::move(c.result));
  }
  return set;
}

// ---------------------------------------------------------------------------
// nvbench (nvbench/json_printer.cu).

constexpr char kColdMean[] = "nv/cold/time/gpu/mean";
constexpr char kBatchMean[] = "nv/batch/time/gpu/mean";
constexpr char kColdBandwidth[] = "nv/cold/bw/global/bytes_per_second";
constexpr char kColdSampleFile[] = "nv/json/bin:nv/cold/sample_times";

// data[] of a summary (or axis_values[]) as name -> the entry.
std::map<std::string, const json*> NamedValues(const json& list, const std::string& path) {
  std::map<std::string, const json*> out;
  Array(list, path);
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = Index(path, i);
    out[String(Field(list[i], p, "name"), Member(p, "name"))] = &Field(list[i], p, "value");
  }
  return out;
}

std::string Dirname(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool Readable(const std::string& path) { return ::access(path.c_str(), R_OK) == 0; }

// nvbench names the file "<json as given on its command line>-bin/N.bin",
// relative to where it ran; beside the JSON it is "<json>-bin/N.bin".
std::string FindSampleFile(const std::string& json_path, const std::string& filename) {
  std::vector<std::string> candidates;
  if (!filename.empty() && filename[0] == '/') candidates.push_back(filename);
  candidates.push_back(absl::StrCat(json_path, "-bin/", Basename(filename)));
  candidates.push_back(absl::StrCat(Dirname(json_path), "/", filename));
  for (const std::string& c : candidates) {
    if (Readable(c)) return c;
  }
  return "";
}

// Sample times in seconds: little-endian float32, as json_printer writes them.
std::vector<double> ReadSampleTimes(const std::string& file, const std::string& path, int64_t expected) {
  std::ifstream in(file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) Throw(path, absl::StrCat("cannot read ", file));
  if (bytes.size() % 4 != 0) Throw(path, absl::StrCat(file, " is ", bytes.size(), " bytes, not a whole number of float32"));
  const size_t n = bytes.size() / 4;
  if (expected >= 0 && static_cast<size_t>(expected) != n) {
    Throw(path, absl::StrCat(file, " holds ", n, " samples where the JSON says ", expected));
  }
  std::vector<double> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + 4 * i);
    const uint32_t word = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    float f;
    std::memcpy(&f, &word, 4);
    if (!std::isfinite(f) || f <= 0) Throw(path, absl::StrCat(file, ": sample ", i, " is ", f, ", not a positive time"));
    out.push_back(f);
  }
  return out;
}

struct NvbenchDevice {
  std::string name;
  uint64_t memory = 0;
};

ResultSet ReadNvbench(const json& root, const std::string& json_path) {
  ResultSet set;
  set.format = kFormatNvbench;
  std::map<int64_t, NvbenchDevice> devices;
  if (const json* list = OptionalField(root, "", "devices")) {
    Array(*list, "devices");
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string path = Index("devices", i);
      const json& d = (*list)[i];
      const json& id = Field(d, path, "id");
      if (!id.is_number_integer()) Throw(Member(path, "id"), "not an integer");
      NvbenchDevice& dev = devices[id.get<int64_t>()];
      dev.name = String(Field(d, path, "name"), Member(path, "name"));
      dev.memory = static_cast<uint64_t>(
          NumberOrNumericString(Field(d, path, "global_memory_size"), Member(path, "global_memory_size")));
      for (const auto& [k, v] : d.items()) {
        if (k != "id") set.context[absl::StrCat("device.", id.get<int64_t>(), ".", k)] = Text(v);
      }
    }
  }
  if (const json* meta = OptionalField(root, "", "meta")) {
    if (meta->is_object()) {
      if (auto v = meta->find("version"); v != meta->end() && v->is_object() && v->contains("nvbench")) {
        const json& nv = (*v)["nvbench"];
        if (nv.is_object() && nv.contains("string")) set.context["nvbench_version"] = Text(nv["string"]);
      }
      if (auto argv = meta->find("argv"); argv != meta->end() && argv->is_array()) {
        std::vector<std::string> args;
        for (const json& a : *argv) args.push_back(Text(a));
        set.context["argv"] = absl::StrJoin(args, " ");
      }
    }
  }

  const json& benchmarks = Array(Field(root, "", "benchmarks"), "benchmarks");
  if (benchmarks.empty()) Throw("benchmarks", "empty: the file holds no results");
  // A state measured on more than one device gets the device as a parameter,
  // so that its cases stay apart.
  std::set<int64_t> used_devices;
  for (const json& b : benchmarks) {
    if (!b.is_object() || !b.contains("states") || !b["states"].is_array()) continue;
    for (const json& st : b["states"]) {
      if (st.is_object() && st.contains("device") && st["device"].is_number_integer()) {
        used_devices.insert(st["device"].get<int64_t>());
      }
    }
  }
  const bool device_param = used_devices.size() > 1;
  const int64_t sku_device = used_devices.empty() ? (devices.empty() ? -1 : devices.begin()->first)
                                                  : *used_devices.begin();
  if (auto d = devices.find(sku_device); d != devices.end()) {
    set.sku = GpuSkuKey(d->second.name, d->second.memory);
    set.context["gpu_name"] = d->second.name;
  }

  std::set<std::string> keys;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const std::string bpath = Index("benchmarks", i);
    const std::string name = String(Field(benchmarks[i], bpath, "name"), Member(bpath, "name"));
    const json& states = Array(Field(benchmarks[i], bpath, "states"), Member(bpath, "states"));
    for (size_t j = 0; j < states.size(); ++j) {
      const std::string path = Index(Member(bpath, "states"), j);
      const json& st = states[j];
      CaseResult r;
      r.benchmark.suite = "nvbench";
      r.benchmark.name = NameToken(name);
      if (const json* axes = OptionalField(st, path, "axis_values")) {
        for (const auto& [axis, value] : NamedValues(*axes, Member(path, "axis_values"))) {
          r.benchmark.params[Token(axis)] = Token(Text(*value));
        }
      }
      if (device_param) {
        const json& dev = Field(st, path, "device");
        r.benchmark.params["device"] = Text(dev);
      }
      if (!keys.insert(r.benchmark.Key()).second) Throw(path, absl::StrCat(r.benchmark.Key(), " appears twice"));
      r.metrics.push_back({"gpu_time", "ms", Direction::kLowerIsBetter});

      bool skipped = false;
      if (const json* s = OptionalField(st, path, "is_skipped")) skipped = Bool(*s, Member(path, "is_skipped"));
      if (skipped) {
        r.status = CaseStatus::kSkipped;
        if (const json* reason = OptionalField(st, path, "skip_reason")) r.reason = String(*reason, Member(path, "skip_reason"));
        set.cases.push_back(std::move(r));
        continue;
      }

      // tag -> (data[] by name, path of the summary)
      std::map<std::string, std::pair<std::map<std::string, const json*>, std::string>> summaries;
      const json& list = Array(Field(st, path, "summaries"), Member(path, "summaries"));
      for (size_t k = 0; k < list.size(); ++k) {
        const std::string spath = Index(Member(path, "summaries"), k);
        const std::string tag = String(Field(list[k], spath, "tag"), Member(spath, "tag"));
        std::map<std::string, const json*> data;
        if (const json* d = OptionalField(list[k], spath, "data")) data = NamedValues(*d, Member(spath, "data"));
        summaries[tag] = {std::move(data), spath};
      }
      auto value_of = [&](const char* tag) -> std::optional<double> {
        auto it = summaries.find(tag);
        if (it == summaries.end()) return std::nullopt;
        const auto& [data, spath] = it->second;
        auto v = data.find("value");
        if (v == data.end()) Throw(Member(spath, "data"), absl::StrCat("no 'value' in summary ", tag));
        return PositiveFinite(NumberOrNumericString(*v->second, absl::StrCat(spath, ".data.value")),
                              absl::StrCat(spath, ".data.value"), "value");
      };
      const std::optional<double> mean = value_of(kColdMean);
      if (!mean) {
        Throw(Member(path, "summaries"), absl::StrCat("no ", kColdMean, " summary: the state was not measured with the cold timer"));
      }
      const std::optional<double> bandwidth = value_of(kColdBandwidth);
      const std::optional<double> batch = value_of(kBatchMean);
      if (bandwidth) r.metrics.push_back({"global_bandwidth", "GB/s", Direction::kHigherIsBetter});

      std::vector<double> times;
      std::string missing_file;
      if (auto it = summaries.find(kColdSampleFile); it != summaries.end()) {
        const auto& [data, spath] = it->second;
        auto f = data.find("filename");
        if (f == data.end()) Throw(Member(spath, "data"), "no 'filename' of the sample-time file");
        const std::string filename = String(*f->second, absl::StrCat(spath, ".data.filename"));
        int64_t expected = -1;
        if (auto size = data.find("size"); size != data.end()) {
          expected = static_cast<int64_t>(NumberOrNumericString(*size->second, absl::StrCat(spath, ".data.size")));
        }
        const std::string file = FindSampleFile(json_path, filename);
        if (file.empty()) {
          missing_file = filename;
        } else {
          times = ReadSampleTimes(file, absl::StrCat(spath, ".data.filename"), expected);
        }
      }
      if (!times.empty()) {
        // nvbench's bandwidth is bytes / mean time; the same bytes over each
        // sample's time give the bandwidth of that sample.
        const double bytes = bandwidth ? *bandwidth * *mean : 0;
        for (size_t k = 0; k < times.size(); ++k) {
          Sample s;
          s.index = static_cast<uint32_t>(k);
          s.values.push_back(times[k] * 1e3);
          if (bandwidth) s.values.push_back(bytes / times[k] / 1e9);
          r.samples.push_back(std::move(s));
        }
      } else {
        // Only nvbench's means: one sample, and the batch time, which exists
        // only as a mean, can go with it.
        if (batch) r.metrics.push_back({"batch_gpu_time", "ms", Direction::kLowerIsBetter});
        Sample s;
        s.values.push_back(*mean * 1e3);
        if (bandwidth) s.values.push_back(*bandwidth / 1e9);
        if (batch) s.values.push_back(*batch * 1e3);
        r.samples.push_back(std::move(s));
        r.reason = missing_file.empty()
                       ? "summary only"
                       : absl::StrCat("summary only: sample-time file ", missing_file, " not found beside ", json_path);
      }
      r.status = CaseStatus::kOk;
      r.noise = NoiseOfFirstMetric(r);
      set.cases.push_back(std::move(r));
    }
  }
  return set;
}

ojson ToJson(const CaseResult& c) {
  ojson out = ojson::object();
  ojson params = ojson::object();
  for (const auto& [k, v] : c.benchmark.params) params[k] = v;
  out["benchmark"] = {{"suite", c.benchmark.suite}, {"name", c.benchmark.name}, {"params", params}};
  out["key"] = c.benchmark.Key();
  out["status"] = ToString(c.status);
  out["reason"] = c.reason;
  out["noise"] = c.noise;
  if (c.seconds > 0) out["seconds"] = c.seconds;
  ojson metrics = ojson::array();
  for (const MetricSpec& m : c.metrics) {
    metrics.push_back({{"name", m.name}, {"unit", m.unit}, {"direction", ToString(m.direction)}});
  }
  out["metrics"] = metrics;
  ojson samples = ojson::array();
  for (const Sample& s : c.samples) {
    samples.push_back({{"index", s.index}, {"values", s.values}, {"throttled", s.throttled}});
  }
  out["samples"] = samples;
  return out;
}

}  // namespace

absl::StatusOr<ResultSet> ParseResultJson(const std::string& text, const std::string& name) {
  json root;
  try {
    root = json::parse(QuoteNonFinite(text));
  } catch (const json::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": not valid JSON", e.byte >= text.size() ? " (the file ends early: truncated?)" : "", ": ", e.what()));
  }
  try {
    if (root.is_object()) {
      auto format = root.find("format");
      if (format != root.end() && format->is_string() && format->get<std::string>() == kPerfgateFormatTag) {
        return ReadPerfgate(root);
      }
      auto benchmarks = root.find("benchmarks");
      if (benchmarks != root.end() && root.contains("context")) return ReadGoogleBenchmark(root);
      if (benchmarks != root.end() &&
          (root.contains("devices") ||
           (benchmarks->is_array() && !benchmarks->empty() && (*benchmarks)[0].is_object() &&
            (*benchmarks)[0].contains("states")))) {
        return ReadNvbench(root, name);
      }
    }
    return absl::InvalidArgumentError(absl::StrCat(
        name, ": unknown format: expected a perfgate result file (\"format\": \"", kPerfgateFormatTag,
        "\"), Google Benchmark JSON (--benchmark_format=json: \"context\" and \"benchmarks\") or "
        "nvbench JSON (--json: \"devices\" and \"benchmarks\"[].\"states\")"));
  } catch (const FormatError& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", e.path.empty() ? "" : e.path + ": ", e.what));
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", e.what()));
  }
}

absl::StatusOr<ResultSet> ReadResultFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return ParseResultJson(text.str(), path);
}

std::string WriteResultJson(const RunMeta& meta, const std::vector<CaseResult>& cases) {
  ojson root;
  root["format"] = kPerfgateFormatTag;
  root["version"] = kPerfgateVersion;
  ojson env = ojson::object();
  for (const auto& [k, v] : meta.environment.fields) env[k] = v;
  root["run"] = {{"run_id", meta.run_id},
                 {"agent_name", meta.agent_name},
                 {"repo", meta.repo},
                 {"branch", meta.branch},
                 {"commit", meta.commit},
                 {"trigger", ToString(meta.trigger)},
                 {"ci_job", meta.ci_job},
                 {"node", meta.node},
                 {"started_at", FormatUtcTime(meta.started_at)},
                 {"parent_commits", meta.parent_commits},
                 {"sku", meta.environment.sku},
                 {"environment", env}};
  ojson list = ojson::array();
  for (const CaseResult& c : cases) list.push_back(ToJson(c));
  root["cases"] = list;
  return root.dump(1) + "\n";
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
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
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
