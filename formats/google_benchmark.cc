// Google Benchmark's JSON (--benchmark_format=json or --benchmark_out=F;
// src/json_reporter.cc) of every release since 1.0: one case per run name,
// one sample per repetition, counters as metrics. Releases before 1.5 write
// no run_name and no run_type: aggregates are then told by their name's
// suffix (_mean, _median, _stddev, _cv), complexity rows by _BigO and _RMS.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/identity.h"
#include "formats/case_evidence.h"
#include "formats/format_registry.h"
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
      "rms",            "skipped",       "skip_message"};
  return kKeys;
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

// Google Benchmark's context, and a SKU when the program recorded its CPU.
void ReadContext(const json& root, ResultSet* set) {
  const json* found = OptionalField(root, "", "context");
  if (found == nullptr) return;  // compare.py's own test inputs go without one
  const json& context = *found;
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
    if (!r->is_number_unsigned() || r->get<uint64_t>() > kMaxSampleIndex) {
      Throw(Member(path, "repetition_index"), absl::StrCat("not an integer from 0 to ", kMaxSampleIndex));
    }
    sample.index = static_cast<uint32_t>(r->get<uint64_t>());
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

// kUndecided: an old-style "BM_x_mean" whose kind the file's other names
// tell (OldStyleAggregate), asked before every name is known.
enum class RowKind { kIteration, kAggregate, kComplexity, kUndecided };

// One benchmarks[] entry, classified.
struct Row {
  RowKind kind = RowKind::kIteration;
  std::string run_name;
  std::string aggregate;  // mean, median, stddev, cv, ... ("" when the file names none)
};

constexpr const char* kAggregateSuffixes[] = {"mean", "median", "stddev", "cv"};

// The "_mean"-like suffix of a name ("mean"), or "".
std::string SuffixOf(const std::string& name, bool complexity) {
  const std::vector<const char*> suffixes =
      complexity ? std::vector<const char*>{"BigO", "RMS"}
                 : std::vector<const char*>(std::begin(kAggregateSuffixes), std::end(kAggregateSuffixes));
  for (const char* suffix : suffixes) {
    const std::string tail = absl::StrCat("_", suffix);
    if (name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0) return suffix;
  }
  return "";
}

std::string WithoutSuffix(const std::string& name, const std::string& suffix) {
  return suffix.empty() ? name : name.substr(0, name.size() - suffix.size() - 1);
}

// Before run_type (releases before 1.5), "BM_x_mean" is an aggregate when the
// file also holds BM_x or another aggregate of BM_x; a lone "BM_x_mean" is a
// benchmark of that name.
bool OldStyleAggregate(const std::string& name, const std::string& suffix, const std::set<std::string>& names) {
  const std::string base = WithoutSuffix(name, suffix);
  if (names.count(base) != 0) return true;
  for (const char* other : kAggregateSuffixes) {
    if (other != suffix && names.count(absl::StrCat(base, "_", other)) != 0) return true;
  }
  return false;
}

// `names`: every name of the file, or null while they are not all known.
Row Classify(const json& b, const std::string& path, const std::set<std::string>* names) {
  Row row;
  const std::string name = String(Field(b, path, "name"), Member(path, "name"));
  const json* run_type = OptionalField(b, path, "run_type");
  const json* aggregate_name = OptionalField(b, path, "aggregate_name");
  if (aggregate_name != nullptr) row.aggregate = String(*aggregate_name, Member(path, "aggregate_name"));
  const std::string complexity = SuffixOf(name, true);
  if (b.contains("big_o") || b.contains("rms") || row.aggregate == "BigO" || row.aggregate == "RMS" ||
      (run_type == nullptr && !complexity.empty())) {
    row.kind = RowKind::kComplexity;
    row.run_name = WithoutSuffix(name, complexity);
  } else if (run_type != nullptr) {
    const std::string type = String(*run_type, Member(path, "run_type"));
    if (type != "iteration" && type != "aggregate") {
      Throw(Member(path, "run_type"), absl::StrCat("'", type, "' is neither iteration nor aggregate"));
    }
    row.kind = type == "aggregate" ? RowKind::kAggregate : RowKind::kIteration;
    if (row.kind == RowKind::kAggregate && row.aggregate.empty()) row.aggregate = SuffixOf(name, false);
    row.run_name = row.kind == RowKind::kAggregate ? WithoutSuffix(name, SuffixOf(name, false)) : name;
  } else {
    const std::string suffix = SuffixOf(name, false);
    if (!suffix.empty() && names == nullptr) {
      row.kind = RowKind::kUndecided;
      return row;
    }
    if (!suffix.empty() && OldStyleAggregate(name, suffix, *names)) {
      row.kind = RowKind::kAggregate;
      row.aggregate = suffix;
    }
    row.run_name = row.kind == RowKind::kAggregate ? WithoutSuffix(name, suffix) : name;
  }
  if (const json* r = OptionalField(b, path, "run_name")) row.run_name = String(*r, Member(path, "run_name"));
  return row;
}

struct GbenchCase {
  CaseResult result;
  std::string first_path;  // where the case was first seen
  std::string run_name;
  size_t first_row = 0;    // the index of that entry: cases keep the file's order
  size_t iterations = 0;
  std::vector<std::string> aggregate_names;  // in file order
  // The first median and the first mean with their paths, kept for
  // UseAggregate: the entries themselves are dropped once read.
  std::map<std::string, std::pair<std::string, json>> stand_ins;
};

// time_unit, "ns" when absent (1.0 wrote none: its times are nanoseconds).
std::string TimeUnit(const json& b, const std::string& path) {
  const json* u = OptionalField(b, path, "time_unit");
  if (u == nullptr) return "ns";
  const std::string unit = String(*u, Member(path, "time_unit"));
  if (unit != "ns" && unit != "us" && unit != "ms" && unit != "s") {
    Throw(Member(path, "time_unit"), absl::StrCat("'", unit, "' is not one of ns, us, ms, s"));
  }
  return unit;
}

// The benchmark reported an error (error_occurred) or skipped itself
// (skipped, 1.8 on): the case fails or is skipped with the message.
bool RecordErrorOrSkip(const json& b, const std::string& path, std::vector<MetricSpec> metrics, CaseResult* r) {
  bool error = false, skipped = false;
  if (const json* e = OptionalField(b, path, "error_occurred")) error = Bool(*e, Member(path, "error_occurred"));
  if (const json* s = OptionalField(b, path, "skipped")) skipped = Bool(*s, Member(path, "skipped"));
  if (!error && !skipped) return false;
  const char* message_key = error ? "error_message" : "skip_message";
  std::string message;
  if (const json* m = OptionalField(b, path, message_key)) message = String(*m, Member(path, message_key));
  if (error) {
    r->status = CaseStatus::kFailed;
    r->reason = message.empty() ? "the benchmark reported an error" : message;
  } else if (r->status != CaseStatus::kFailed) {
    r->status = CaseStatus::kSkipped;
    r->reason = message.empty() ? "the benchmark skipped itself" : message;
  }
  if (r->metrics.empty()) r->metrics = std::move(metrics);
  return true;
}

// Adds one repetition (or the aggregate standing in for them) as a sample.
void AddSample(const json& b, const std::string& path, GbenchCase* c) {
  const std::string unit = TimeUnit(b, path);
  std::vector<MetricSpec> metrics = {{"real_time", unit, Direction::kLowerIsBetter},
                                     {"cpu_time", unit, Direction::kLowerIsBetter}};
  CaseResult& r = c->result;
  if (RecordErrorOrSkip(b, path, metrics, &r)) return;
  Sample sample = ReadIteration(b, path, r, &metrics);
  if (r.metrics.empty() || r.samples.empty()) {
    r.metrics = metrics;
  } else if (r.metrics != metrics) {
    std::vector<std::string> now, before;
    for (const MetricSpec& m : metrics) now.push_back(absl::StrCat(m.name, " [", m.unit, "]"));
    for (const MetricSpec& m : r.metrics) before.push_back(absl::StrCat(m.name, " [", m.unit, "]"));
    Throw(path, absl::StrCat("reports ", absl::StrJoin(now, ", "), " where ", c->first_path, " of the same run '",
                             c->run_name, "' reported ", absl::StrJoin(before, ", ")));
  }
  // The repetition's own timed seconds (iterations of real_time), which
  // an A/B of the program sizes its blocks by.
  if (const json* it = OptionalField(b, path, "iterations"); it != nullptr && it->is_number() && !sample.values.empty()) {
    static const std::map<std::string, double> kSeconds = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1.0}};
    if (auto scale = kSeconds.find(unit); scale != kSeconds.end()) {
      r.sample_seconds += it->get<double>() * sample.values[0] * scale->second;
    }
  }
  r.samples.push_back(std::move(sample));
}

// A case of aggregates alone (--benchmark_report_aggregates_only): the
// median, else the mean, is its one sample; false when it has neither.
bool UseAggregate(GbenchCase* c) {
  for (const char* wanted : {"median", "mean"}) {
    auto it = c->stand_ins.find(wanted);
    if (it == c->stand_ins.end()) continue;
    AddSample(it->second.second, it->second.first, c);
    for (Sample& s : c->result.samples) s.index = 0;
    return true;
  }
  std::vector<std::string> names;
  for (const std::string& name : c->aggregate_names) names.push_back(name.empty() ? "unnamed" : name);
  c->result.status = CaseStatus::kSkipped;
  c->result.reason = absl::StrCat("only aggregates (", absl::StrJoin(names, ", "), ") and no median or mean");
  return false;
}

void AddNotes(const std::vector<std::string>& complexity, const std::vector<std::string>& from_aggregate,
              const std::vector<std::string>& unusable, ResultSet* set) {
  if (!complexity.empty()) {
    set->notes.push_back(absl::StrCat("skipped ", complexity.size(),
                                      " complexity rows (BigO, RMS: fits over other cases, not measurements): ",
                                      FewNames(complexity)));
  }
  if (!from_aggregate.empty()) {
    set->notes.push_back(absl::StrCat(
        from_aggregate.size(), " cases hold only aggregates (--benchmark_report_aggregates_only): one sample each, "
        "from the median (else the mean); rerun without that flag to gate on every repetition: ",
        FewNames(from_aggregate)));
  }
  if (!unusable.empty()) {
    set->notes.push_back(absl::StrCat(unusable.size(), " cases hold only aggregates other than median and mean "
                                      "and are reported skipped: ", FewNames(unusable)));
  }
}

// Google Benchmark's reader, fed one benchmarks[] entry at a time in file
// order, so that a file need not be held as a tree: entries are read as
// they are parsed (ParseJson) or from a tree (ReadGoogleBenchmark).
class GbenchReader {
 public:
  void Entry(const json& b, size_t i) {
    const std::string path = Index("benchmarks", i);
    names_.insert(String(Field(b, path, "name"), Member(path, "name")));
    ++entries_;
    if (Classify(b, path, nullptr).kind == RowKind::kUndecided) {
      undecided_.emplace_back(i, b.dump());  // its text: about its size in the file
      return;
    }
    Read(b, path, i);
  }

  // The result set of every entry fed, with the context of `root`.
  ResultSet Finish(const json& root) {
    if (entries_ == 0) Throw("benchmarks", "empty: the file holds no results");
    for (const auto& [i, text] : undecided_) Read(json::parse(text), Index("benchmarks", i), i);
    std::stable_sort(cases_.begin(), cases_.end(),
                     [](const GbenchCase& a, const GbenchCase& b) { return a.first_row < b.first_row; });
    ResultSet set;
    set.format = kFormatGoogleBenchmark;
    ReadContext(root, &set);
    std::vector<std::string> from_aggregate, unusable;
    for (GbenchCase& c : cases_) {
      if (c.iterations == 0) (UseAggregate(&c) ? from_aggregate : unusable).push_back(c.run_name);
      if (c.result.status == CaseStatus::kUnspecified) c.result.status = CaseStatus::kOk;
      c.result.noise = NoiseOfFirstMetric(c.result);
      set.cases.push_back(std::move(c.result));
    }
    AddNotes(complexity_, from_aggregate, unusable, &set);
    return set;
  }

 private:
  void Read(const json& b, const std::string& path, size_t i) {
    const Row row = Classify(b, path, &names_);
    if (row.kind == RowKind::kComplexity) {
      complexity_.push_back(b["name"].get<std::string>());
      return;
    }
    GbenchCase& c = CaseOf(row, path, i);
    if (row.kind == RowKind::kAggregate) {
      c.aggregate_names.push_back(row.aggregate);
      if (row.aggregate == "median" || row.aggregate == "mean") c.stand_ins.try_emplace(row.aggregate, path, b);
      return;  // perfgate computes its own statistics from the repetitions
    }
    ++c.iterations;
    AddSample(b, path, &c);
  }

  // The case of `row`, made on its first row.
  GbenchCase& CaseOf(const Row& row, const std::string& path, size_t i) {
    auto [it, added] = by_run_name_.try_emplace(row.run_name, cases_.size());
    if (added) {
      GbenchCase c;
      c.result.benchmark = GbenchId(row.run_name);
      c.run_name = row.run_name;
      auto [other, fresh] = run_name_of_key_.try_emplace(c.result.benchmark.Key(), row.run_name);
      if (!fresh) {
        Throw(Member(path, "name"), absl::StrCat("'", row.run_name, "' and '", other->second, "' both map to ",
                                                 c.result.benchmark.Key()));
      }
      c.first_path = path;
      c.first_row = i;
      cases_.push_back(std::move(c));
    }
    return cases_[it->second];
  }

  std::set<std::string> names_;  // of every entry read so far
  size_t entries_ = 0;
  std::vector<std::pair<size_t, std::string>> undecided_;  // index, text: read once every name is known
  std::vector<GbenchCase> cases_;
  std::map<std::string, size_t> by_run_name_;
  std::map<std::string, std::string> run_name_of_key_;
  std::vector<std::string> complexity_;
};

// Whether the first entry of benchmarks[] shows Google Benchmark's file
// rather than pytest-benchmark's (stats) or nvbench's (states): ReadJson's
// test, so the entries are read as they come only where it would pick
// this reader.
bool LooksLikeGbenchEntry(const json& entry) {
  return entry.is_object() && entry.contains("name") && !entry.contains("stats") && !entry.contains("states");
}

ResultSet ReadGoogleBenchmark(const json& root, const std::string&) {
  GbenchReader reader;
  const json& benchmarks = ResultList(root, "benchmarks");
  for (size_t i = 0; i < benchmarks.size(); ++i) reader.Entry(benchmarks[i], i);
  return reader.Finish(root);
}

bool LooksLikeGoogleBenchmark(const json& root) {
  return root.contains("benchmarks") && (root.contains("context") || FirstEntryHas(root, "benchmarks", "name"));
}

}  // namespace

extern const Format kGoogleBenchmarkFormat{
    kFormatGoogleBenchmark,
    "Google Benchmark JSON (--benchmark_format=json or --benchmark_out=F: \"benchmarks\"[].\"name\")",
    LooksLikeGoogleBenchmark,
    ReadGoogleBenchmark,
    nullptr,
    nullptr,
};

json ParseJson(const std::string& text, std::optional<ResultSet>* google_benchmark) {
  using Event = json::parse_event_t;
  GbenchReader reader;
  std::optional<FormatError> error;  // the first, raised once the whole text proved to be JSON
  std::string key;                   // the root member being parsed
  int lists = 0;                     // root members named "benchmarks"
  bool in_list = false, reading = false;
  size_t i = 0;                      // entries of the list so far
  const json::parser_callback_t entries = [&](int depth, Event event, json& parsed) {
    if (depth == 1 && event == Event::key) {
      key = parsed.get<std::string>();
      if (key == "benchmarks") ++lists;
    }
    if (depth == 1 && event == Event::array_start) in_list = key == "benchmarks" && lists == 1;
    if (depth == 1 && event == Event::array_end) in_list = false;
    const bool entry = in_list && depth == 2 && (event == Event::object_end || event == Event::array_end ||
                                                 event == Event::value);
    if (!entry) return true;
    if (i++ == 0) reading = LooksLikeGbenchEntry(parsed);
    if (!reading) return true;
    if (!error) {
      try {
        reader.Entry(parsed, i - 1);
      } catch (const FormatError& e) {
        error = e;
      }
    }
    return false;  // read: dropped from the tree
  };
  json root = json::parse(text, entries);
  // ReadJson's order: a perfgate file, pytest-benchmark and nvbench come
  // first. Where the root says the entries were not Google Benchmark's
  // after all, or holds two lists, the text is parsed again as a whole.
  const auto format = root.is_object() ? root.find("format") : root.end();
  const bool perfgate = format != root.end() && format->is_string() && *format == kPerfgateFormatTag;
  if (!reading || perfgate || lists != 1 || root.contains("machine_info") || root.contains("devices")) {
    return reading ? json::parse(text) : root;
  }
  if (error) throw *error;
  *google_benchmark = reader.Finish(root);
  return root;
}

}  // namespace perfgate::formats
