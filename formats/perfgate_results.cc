// perfgate's own result file: what `perfgate-agent run --output` writes and
// every perfgate command reads back exactly. Read with simdjson's DOM (the
// files that run to tens of megabytes are these); written with nlohmann.
#include "formats/perfgate_results.h"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <map>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "common/huge_pages.h"
#include "common/identity.h"
#include "formats/format_registry.h"
#include "formats/json_fields.h"
#include "formats/result_file.h"

namespace perfgate::formats {
namespace {

static_assert(kParsePadding >= simdjson::SIMDJSON_PADDING);

using simdjson::dom::element;
using simdjson::dom::element_type;

// A JSON path built only when something is wrong: the walk of 400 000
// values must not format 200 000 paths it never prints. PathOf gives the
// text of a path given as text or as a function that makes it.
const std::string& PathOf(const std::string& path) { return path; }
template <class F>
std::string PathOf(const F& make) {
  return make();
}

// nlohmann's names of the JSON types, which every reader's messages use.
const char* TypeName(element e) {
  switch (e.type()) {
    case element_type::ARRAY: return "array";
    case element_type::OBJECT: return "object";
    case element_type::STRING: return "string";
    case element_type::BOOL: return "boolean";
    case element_type::NULL_VALUE: return "null";
    default: return "number";
  }
}

// Scalars as text; arrays and objects as compact JSON (as Text does).
std::string TextOf(element e) {
  std::string_view s;
  if (e.get(s) == simdjson::SUCCESS) return std::string(s);
  return simdjson::minify(e);
}

template <class P>
simdjson::dom::object ObjectOf(element e, const P& path) {
  simdjson::dom::object o;
  if (e.get(o) != simdjson::SUCCESS) Throw(PathOf(path), "not an object");
  return o;
}

// A required member of an object; an optional one (nullopt when absent).
template <class P>
element FieldOf(element obj, const P& path, std::string_view key) {
  element v;
  if (ObjectOf(obj, path).at_key(key).get(v) != simdjson::SUCCESS) Throw(Member(PathOf(path), std::string(key)), "missing");
  return v;
}
template <class P>
std::optional<element> OptionalFieldOf(element obj, const P& path, std::string_view key) {
  element v;
  if (ObjectOf(obj, path).at_key(key).get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

template <class P>
std::string StringOf(element e, const P& path) {
  std::string_view s;
  if (e.get(s) != simdjson::SUCCESS) Throw(PathOf(path), absl::StrCat("not a string (", TypeName(e), ")"));
  return std::string(s);
}

template <class P>
simdjson::dom::array ArrayOf(element e, const P& path) {
  simdjson::dom::array a;
  if (e.get(a) != simdjson::SUCCESS) Throw(PathOf(path), absl::StrCat("not an array (", TypeName(e), ")"));
  return a;
}

template <class P>
bool BoolOf(element e, const P& path) {
  bool b = false;
  if (e.get(b) != simdjson::SUCCESS) Throw(PathOf(path), absl::StrCat("not true or false (", TypeName(e), ")"));
  return b;
}

// A number; anything else is refused as Number refuses it (a NaN or
// Infinity that QuoteNonFinite marked by its name).
template <class P>
double NumberOf(element e, const P& path) {
  double d = 0;
  if (e.get(d) == simdjson::SUCCESS) return d;
  return Number(json::parse(simdjson::minify(e)), PathOf(path));
}

// An integer of the file (nlohmann's is_number_integer).
bool IsInteger(element e) { return e.type() == element_type::INT64 || e.type() == element_type::UINT64; }

TimePoint ParseTime(const std::string& s, const std::string& path) {
  auto t = ParseUtcTime(s);
  if (!t.ok()) Throw(path, std::string(t.status().message()));
  return *t;
}

BenchmarkId ReadBenchmark(element c, const std::string& path) {
  BenchmarkId id;
  const element b = FieldOf(c, path, "benchmark");
  const std::string bpath = Member(path, "benchmark");
  id.suite = StringOf(FieldOf(b, bpath, "suite"), Member(bpath, "suite"));
  id.name = StringOf(FieldOf(b, bpath, "name"), Member(bpath, "name"));
  if (const auto params = OptionalFieldOf(b, bpath, "params")) {
    for (const auto [k, v] : ObjectOf(*params, Member(bpath, "params"))) {
      // A named copy: clang before 16 refuses a lambda that captures a structured binding.
      const std::string key(k);
      id.params[key] = StringOf(v, [&] { return absl::StrCat(bpath, ".params.", key); });
    }
  }
  if (absl::Status s = ValidateBenchmarkId(id, bpath); !s.ok()) Throw("", std::string(s.message()));
  return id;
}

MetricSpec ReadMetric(element m, const std::string& mpath) {
  MetricSpec spec;
  spec.name = StringOf(FieldOf(m, mpath, "name"), Member(mpath, "name"));
  spec.unit = StringOf(FieldOf(m, mpath, "unit"), Member(mpath, "unit"));
  const std::string dir = StringOf(FieldOf(m, mpath, "direction"), Member(mpath, "direction"));
  if (!ParseDirection(dir, &spec.direction)) {
    Throw(Member(mpath, "direction"), absl::StrCat("'", dir, "' is neither higher_is_better nor lower_is_better"));
  }
  return spec;
}

// Sample `i` of the case at `path`, whose path is made only for an error.
Sample ReadSample(element s, const std::string& path, size_t i, size_t metrics) {
  const auto spath = [&] { return Index(Member(path, "samples"), i); };
  const auto member = [&](const char* key) { return [&, key] { return Member(spath(), key); }; };
  Sample sample;
  const element index = FieldOf(s, spath, "index");
  // Stored as a 32-bit signed integer: a larger index would wrap.
  int64_t i64 = -1;
  if (index.type() != element_type::INT64 || index.get(i64) != simdjson::SUCCESS || i64 < 0 ||
      static_cast<uint64_t>(i64) > kMaxSampleIndex) {
    Throw(member("index")(), absl::StrCat("not an integer from 0 to ", kMaxSampleIndex));
  }
  sample.index = static_cast<uint32_t>(i64);
  if (const auto t = OptionalFieldOf(s, spath, "throttled")) sample.throttled = BoolOf(*t, member("throttled"));
  const simdjson::dom::array values = ArrayOf(FieldOf(s, spath, "values"), member("values"));
  if (values.size() != metrics) {
    Throw(member("values")(), absl::StrCat(values.size(), " values for ", metrics, " metrics"));
  }
  sample.values.reserve(metrics);
  for (const element v : values) {
    const auto vpath = [&] { return Index(member("values")(), sample.values.size()); };
    const double d = NumberOf(v, vpath);
    if (!std::isfinite(d)) Throw(vpath(), "not finite");
    sample.values.push_back(d);
  }
  return sample;
}

// A case's bound: {"metric", "kind" (at_least, at_most), "value"}, on one
// of its metrics, which the case has no samples of.
ValueBound ReadBound(element b, const std::string& path, const CaseResult& r) {
  ValueBound out;
  out.metric = StringOf(FieldOf(b, path, "metric"), Member(path, "metric"));
  const std::string kind = StringOf(FieldOf(b, path, "kind"), Member(path, "kind"));
  if (!ParseBoundKind(kind, &out.kind)) {
    Throw(Member(path, "kind"), absl::StrCat("'", kind, "' is neither at_least nor at_most"));
  }
  out.value = NumberOf(FieldOf(b, path, "value"), Member(path, "value"));
  if (!std::isfinite(out.value)) Throw(Member(path, "value"), "not finite");
  const bool known = std::any_of(r.metrics.begin(), r.metrics.end(),
                                 [&](const MetricSpec& m) { return m.name == out.metric; });
  if (!known) Throw(Member(path, "metric"), absl::StrCat("'", out.metric, "' is none of the case's metrics"));
  if (!r.samples.empty()) Throw(path, "a case with samples gives values, not a bound");
  return out;
}

CaseResult ReadCase(element c, const std::string& path) {
  CaseResult r;
  r.benchmark = ReadBenchmark(c, path);
  const std::string status = StringOf(FieldOf(c, path, "status"), Member(path, "status"));
  if (!ParseCaseStatus(status, &r.status)) Throw(Member(path, "status"), absl::StrCat("unknown status '", status, "'"));
  if (const auto v = OptionalFieldOf(c, path, "reason")) r.reason = StringOf(*v, Member(path, "reason"));
  if (const auto v = OptionalFieldOf(c, path, "noise")) r.noise = NumberOf(*v, Member(path, "noise"));
  if (const auto v = OptionalFieldOf(c, path, "seconds")) r.seconds = NumberOf(*v, Member(path, "seconds"));
  if (const auto v = OptionalFieldOf(c, path, "sample_seconds")) {
    r.sample_seconds = NumberOf(*v, Member(path, "sample_seconds"));
  }
  const std::string mpath = Member(path, "metrics");
  size_t m = 0;
  for (const element metric : ArrayOf(FieldOf(c, path, "metrics"), mpath)) {
    r.metrics.push_back(ReadMetric(metric, Index(mpath, m++)));
  }
  const simdjson::dom::array samples = ArrayOf(FieldOf(c, path, "samples"), Member(path, "samples"));
  r.samples.reserve(samples.size());
  for (const element s : samples) r.samples.push_back(ReadSample(s, path, r.samples.size(), r.metrics.size()));
  if (const auto b = OptionalFieldOf(c, path, "bound")) r.bound = ReadBound(*b, Member(path, "bound"), r);
  return r;
}

// The run's meta: its SKU, environment and own fields as context.
void ReadRun(element root, ResultSet* set) {
  const element run = FieldOf(root, std::string(), "run");
  set->sku = StringOf(FieldOf(run, std::string("run"), "sku"), std::string("run.sku"));
  const element env = FieldOf(run, std::string("run"), "environment");
  for (const auto [k, v] : ObjectOf(env, std::string("run.environment"))) {
    const std::string key(k);  // captured by name, as for the params above
    set->context[key] = StringOf(v, [&] { return Member("run.environment", key); });
  }
  for (const char* key : {"run_id", "agent_name", "repo", "branch", "commit", "trigger", "ci_job", "node",
                          "started_at"}) {
    if (const auto v = OptionalFieldOf(run, std::string("run"), key)) {
      set->context[absl::StrCat(kRunContextPrefix, key)] = StringOf(*v, [&] { return Member("run", key); });
    }
  }
  if (const auto v = OptionalFieldOf(run, std::string("run"), "started_at")) {
    ParseTime(StringOf(*v, std::string("run.started_at")), "run.started_at");
  }
}

// The walk over a parsed perfgate result file; FormatError names what is wrong.
ResultSet ReadPerfgateDocument(element root) {
  const element version = FieldOf(root, std::string(), "version");
  int64_t v = 0;
  if (!IsInteger(version) || version.get(v) != simdjson::SUCCESS || v != kPerfgateVersion) {
    Throw("version", absl::StrCat(TextOf(version), " is not a version this perfgate reads (", kPerfgateVersion, ")"));
  }
  ResultSet set;
  set.format = kFormatPerfgate;
  ReadRun(root, &set);
  const simdjson::dom::array cases = ArrayOf(FieldOf(root, std::string(), "cases"), std::string("cases"));
  set.cases.reserve(cases.size());
  // A case may come in parts, as on the wire (the counts `run --count` adds
  // after the timed samples); a metric named in two parts is one metric.
  std::map<std::string, std::map<std::string, MetricSpec>> metrics_of;
  for (const element c : cases) {
    const std::string path = Index("cases", set.cases.size());
    CaseResult r = ReadCase(c, path);
    auto& known = metrics_of[r.benchmark.Key()];
    for (const MetricSpec& m : r.metrics) {
      const auto [it, fresh] = known.emplace(m.name, m);
      if (!fresh && !(it->second == m)) {
        Throw(path, absl::StrCat(r.benchmark.Key(), " gives metric '", m.name, "' as ", m.unit, ", ",
                                 ToString(m.direction), " where an earlier part gave ", it->second.unit, ", ",
                                 ToString(it->second.direction)));
      }
    }
    set.cases.push_back(std::move(r));
  }
  return set;
}

// True for an object whose "format" is perfgate's tag.
bool IsPerfgateDocument(element root) {
  std::string_view format;
  return root.is_object() && root["format"].get(format) == simdjson::SUCCESS && format == kPerfgateFormatTag;
}

// Allocates the parser's buffers for a document of `bytes` bytes ahead of
// the parse (which then uses them as they are) and backs them with huge
// pages: simdjson 3's DOM parser keeps a tape (a word for each value, room
// for one per byte), a string buffer and the structural indexes (room for
// one per byte each). A 26 MB file touches ~40 MB of them: 7 500 page
// faults and 0.14 s to parse on 4 KiB pages, 0.02 s on huge pages (the
// 2-core VM of docs/performance.md). Where allocation fails here, the parse
// allocates and reports it as it would have.
void AllocateOnHugePages(simdjson::dom::parser& parser, size_t bytes) {
  if (parser.allocate(bytes) != simdjson::SUCCESS || parser.doc.allocate(bytes) != simdjson::SUCCESS) return;
  AdviseHugePages(parser.doc.tape.get(), bytes * sizeof(uint64_t));
  AdviseHugePages(parser.doc.string_buf.get(), bytes);
  AdviseHugePages(parser.implementation->structural_indexes.get(), bytes * sizeof(uint32_t));
}

}  // namespace

std::optional<absl::StatusOr<ResultSet>> ReadPerfgateText(const std::string& text, const std::string& name) {
  // Cheap first: a file without the tag anywhere is not perfgate's.
  if (text.find(kPerfgateFormatTag) == std::string::npos) return std::nullopt;
  simdjson::dom::parser parser;
  AllocateOnHugePages(parser, text.size());
  element root;
  // Text simdjson refuses (bare NaN, 1e400, a truncated file) takes the
  // general path, which explains what is wrong with it.
  if (parser.parse(text).get(root) != simdjson::SUCCESS || !IsPerfgateDocument(root)) return std::nullopt;
  try {
    return ReadPerfgateDocument(root);
  } catch (const FormatError& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", e.path.empty() ? "" : e.path + ": ", e.what));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cannot be read: ", e.what()));
  }
}

namespace {

ResultSet ReadPerfgate(const json& root, const std::string&) {
  // Only a file simdjson refused comes here (non-finite words, which the
  // dump carries as QuoteNonFinite's marks): the one walk reads it.
  simdjson::dom::parser parser;
  element parsed;
  if (const auto error = parser.parse(root.dump()).get(parsed); error != simdjson::SUCCESS) {
    Throw("", absl::StrCat("cannot be read: ", simdjson::error_message(error)));
  }
  return ReadPerfgateDocument(parsed);
}

bool LooksLikePerfgate(const json& root) {
  auto format = root.find("format");
  return format != root.end() && format->is_string() && format->get<std::string>() == kPerfgateFormatTag;
}

}  // namespace

extern const Format kPerfgateFormat{
    kFormatPerfgate,
    "a perfgate result file (perfgate-agent run --output F: \"format\": \"perfgate-results\")",
    LooksLikePerfgate,
    ReadPerfgate,
    nullptr,
    nullptr,
};

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
  if (c.sample_seconds > 0) out["sample_seconds"] = c.sample_seconds;
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
  if (c.bound) {
    out["bound"] = {{"metric", c.bound->metric}, {"kind", ToString(c.bound->kind)}, {"value", c.bound->value}};
  }
  return out;
}

}  // namespace perfgate::formats

namespace perfgate {

std::string WriteResultJson(const RunMeta& meta, const std::vector<CaseResult>& cases) {
  formats::ojson root;
  root["format"] = formats::kPerfgateFormatTag;
  root["version"] = formats::kPerfgateVersion;
  formats::ojson env = formats::ojson::object();
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
  formats::ojson list = formats::ojson::array();
  for (const CaseResult& c : cases) list.push_back(formats::ToJson(c));
  root["cases"] = list;
  return root.dump(1) + "\n";
}

}  // namespace perfgate
