// Google Benchmark's JSON (--benchmark_format=json; src/json_reporter.cc):
// one case per run_name, one sample per repetition, counters as metrics.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/identity.h"
#include "formats/json_fields.h"

namespace perfgate::formats {
namespace {

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
      id.params[NameToken(part.substr(0, colon))] = Token(part.substr(colon + 1));
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

// Google Benchmark's context, and a SKU when the program recorded its CPU.
void ReadContext(const json& root, ResultSet* set) {
  const json& context = Field(root, "", "context");
  if (!context.is_object()) Throw("context", "not an object");
  for (const auto& [k, v] : context.items()) set->context[k] = Text(v);
  // Google Benchmark records no CPU model; a program that adds one with
  // benchmark::AddCustomContext("cpu_model", ...) gets a SKU.
  if (auto model = set->context.find("cpu_model"); model != set->context.end()) {
    auto vendor = set->context.find("cpu_vendor");
    set->sku = CpuSkuKey(vendor == set->context.end() ? "" : vendor->second, model->second);
  }
}

// Appends one user counter (or a known rate or allocation count) of an
// iteration as a metric and its value.
void AddCounter(const std::string& key, double d, std::vector<MetricSpec>* metrics, Sample* sample) {
  if (key == "bytes_per_second") {
    metrics->push_back({"bytes_per_second", "GB/s", Direction::kHigherIsBetter});
    sample->values.push_back(d / 1e9);
  } else if (key == "items_per_second") {
    metrics->push_back({"items_per_second", "items/s", Direction::kHigherIsBetter});
    sample->values.push_back(d);
  } else if (key == "allocs_per_iter" || key == "max_bytes_used" || key == "total_allocated_bytes" ||
             key == "net_heap_growth") {
    metrics->push_back({key, key == "allocs_per_iter" ? "allocs" : "bytes", Direction::kLowerIsBetter});
    sample->values.push_back(d);
  } else {
    metrics->push_back({MetricToken(key), "counter", CounterDirection(key)});
    sample->values.push_back(d);
  }
}

// One repetition of a case: real and CPU time, then every counter.
Sample ReadIteration(const json& b, const std::string& path, const CaseResult& so_far,
                     std::vector<MetricSpec>* metrics) {
  Sample sample;
  sample.index = static_cast<uint32_t>(so_far.samples.size());
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
    AddCounter(key, d, metrics, &sample);
  }
  return sample;
}

// Adds one benchmarks[] entry of run `run_name` to its case: an aggregate is
// counted and skipped, an error fails the case, an iteration is a sample.
void AddEntry(const json& b, const std::string& path, const std::string& run_name, GbenchCase* c) {
  const std::string run_type = String(Field(b, path, "run_type"), Member(path, "run_type"));
  if (run_type == "aggregate") {
    ++c->aggregates;  // perfgate computes its own statistics from the repetitions
    return;
  }
  if (run_type != "iteration") Throw(Member(path, "run_type"), absl::StrCat("'", run_type, "' is neither iteration nor aggregate"));
  ++c->iterations;

  const std::string unit = String(Field(b, path, "time_unit"), Member(path, "time_unit"));
  if (unit != "ns" && unit != "us" && unit != "ms" && unit != "s") {
    Throw(Member(path, "time_unit"), absl::StrCat("'", unit, "' is not one of ns, us, ms, s"));
  }
  bool error = false;
  if (const json* e = OptionalField(b, path, "error_occurred")) error = Bool(*e, Member(path, "error_occurred"));
  std::vector<MetricSpec> metrics = {{"real_time", unit, Direction::kLowerIsBetter},
                                     {"cpu_time", unit, Direction::kLowerIsBetter}};
  CaseResult& r = c->result;
  if (error) {
    r.status = CaseStatus::kFailed;
    if (const json* m = OptionalField(b, path, "error_message")) r.reason = String(*m, Member(path, "error_message"));
    if (r.reason.empty()) r.reason = "the benchmark reported an error";
    if (r.metrics.empty()) r.metrics = metrics;
    return;
  }
  Sample sample = ReadIteration(b, path, r, &metrics);
  if (r.metrics.empty() || r.samples.empty()) {
    r.metrics = metrics;
  } else if (r.metrics != metrics) {
    std::vector<std::string> now, before;
    for (const MetricSpec& m : metrics) now.push_back(absl::StrCat(m.name, " [", m.unit, "]"));
    for (const MetricSpec& m : r.metrics) before.push_back(absl::StrCat(m.name, " [", m.unit, "]"));
    Throw(path, absl::StrCat("reports ", absl::StrJoin(now, ", "), " where ", c->first_path, " of the same run_name '",
                             run_name, "' reported ", absl::StrJoin(before, ", ")));
  }
  r.samples.push_back(std::move(sample));
}

// Every case needs repetitions: a file of aggregates alone is refused.
void RequireIterations(const std::vector<GbenchCase>& cases) {
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
}

}  // namespace

ResultSet ReadGoogleBenchmark(const json& root) {
  ResultSet set;
  set.format = kFormatGoogleBenchmark;
  ReadContext(root, &set);
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
    AddEntry(b, path, run_name, &cases[it->second]);
  }
  RequireIterations(cases);
  for (GbenchCase& c : cases) {
    if (c.result.status == CaseStatus::kUnspecified) c.result.status = CaseStatus::kOk;
    c.result.noise = NoiseOfFirstMetric(c.result);
    set.cases.push_back(std::move(c.result));
  }
  return set;
}

}  // namespace perfgate::formats
