// pytest-benchmark's JSON (pytest --benchmark-json=F, or a file saved with
// --benchmark-save; pytest_benchmark/session.py and stats.py): one case per
// benchmarked test, one sample per round where the file holds the rounds
// (stats.data: --benchmark-json writes them, --benchmark-save only with
// --benchmark-save-data), else the run's median as its one sample.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "formats/format_registry.h"
#include "formats/json_fields.h"

namespace perfgate::formats {
namespace {

// machine_info and commit_info, flattened ("machine_info.cpu.brand_raw");
// the host, branch and commit also under the keys ingest and compare read.
void ReadMachineAndCommit(const json& root, ResultSet* set) {
  for (const char* section : {"machine_info", "commit_info"}) {
    const json* s = OptionalField(root, "", section);
    if (s == nullptr || s->is_null()) continue;
    if (!s->is_object()) Throw(section, absl::StrCat("not an object (", s->type_name(), ")"));
    for (const auto& [k, v] : s->items()) {
      if (v.is_object()) {
        for (const auto& [k2, v2] : v.items()) set->context[absl::StrCat(section, ".", k, ".", k2)] = Text(v2);
      } else if (!v.is_null()) {
        set->context[absl::StrCat(section, ".", k)] = Text(v);
      }
    }
  }
  for (const auto& [from, to] : std::map<std::string, std::string>{{"machine_info.node", "host_name"},
                                                                   {"commit_info.id", "commit"},
                                                                   {"commit_info.branch", "branch"}}) {
    if (auto it = set->context.find(from); it != set->context.end()) set->context[to] = it->second;
  }
  for (const char* key : {"datetime", "version"}) {
    if (const json* v = OptionalField(root, "", key); v != nullptr && !v->is_null()) set->context[key] = Text(*v);
  }
  // py-cpuinfo names the model brand_raw (brand before version 6).
  std::string brand, vendor;
  for (const char* key : {"machine_info.cpu.brand_raw", "machine_info.cpu.brand"}) {
    if (auto it = set->context.find(key); brand.empty() && it != set->context.end()) brand = it->second;
  }
  for (const char* key : {"machine_info.cpu.vendor_id_raw", "machine_info.cpu.vendor_id"}) {
    if (auto it = set->context.find(key); vendor.empty() && it != set->context.end()) vendor = it->second;
  }
  if (!brand.empty()) {
    set->context["cpu_model"] = brand;
    set->sku = CpuSkuKey(vendor, brand);
  }
}

// "tests/test_x.py::test_sum[100]" -> name "tests_test_x.py__test_sum"; the
// parameters from params, else the bracketed id as parameter "id".
BenchmarkId PytestId(const json& b, const std::string& path) {
  BenchmarkId id;
  id.suite = "pytest";
  const json* full = OptionalField(b, path, "fullname");
  std::string name = full != nullptr ? String(*full, Member(path, "fullname"))
                                     : String(Field(b, path, "name"), Member(path, "name"));
  std::string bracket;
  if (const size_t open = name.find('['); open != std::string::npos && name.back() == ']') {
    bracket = name.substr(open + 1, name.size() - open - 2);
    name.erase(open);
  }
  id.name = NameToken(name);
  const json* params = OptionalField(b, path, "params");
  if (params != nullptr && params->is_object() && !params->empty()) {
    for (const auto& [k, v] : params->items()) id.params[NameToken(k)] = Token(Text(v));
  } else if (params != nullptr && !params->is_null() && !params->is_object()) {
    Throw(Member(path, "params"), absl::StrCat("not an object (", params->type_name(), ")"));
  } else if (!bracket.empty()) {
    id.params["id"] = Token(bracket);
  }
  if (id.params.size() > kMaxBenchmarkParams) {
    Throw(Member(path, "params"), absl::StrCat(id.params.size(), " parameters; at most ", kMaxBenchmarkParams));
  }
  return id;
}

double Seconds(const json& v, const std::string& path) {
  const double d = Number(v, path);
  if (!std::isfinite(d) || d < 0) Throw(path, absl::StrCat(d, " is not a time in seconds"));
  return d;
}

ResultSet ReadPytestBenchmark(const json& root) {
  ResultSet set;
  ReadMachineAndCommit(root, &set);
  const json& benchmarks = ResultList(root, "benchmarks");
  std::set<std::string> keys;
  size_t summary_only = 0;
  for (size_t i = 0; i < benchmarks.size(); ++i) {
    const std::string path = Index("benchmarks", i);
    const json& b = benchmarks[i];
    CaseResult c;
    c.benchmark = PytestId(b, path);
    if (!keys.insert(c.benchmark.Key()).second) {
      Throw(path, absl::StrCat("a second benchmark with the key ", c.benchmark.Key()));
    }
    c.metrics = {{"time", "s", Direction::kLowerIsBetter}};
    const std::string spath = Member(path, "stats");
    const json& stats = Field(b, path, "stats");
    if (const json* data = OptionalField(stats, spath, "data"); data != nullptr && !data->is_null()) {
      const std::string dpath = Member(spath, "data");
      Array(*data, dpath);
      if (data->size() > kMaxSampleIndex) Throw(dpath, "more rounds than perfgate stores");
      // Each round's time is per iteration; the rounds' own seconds (the
      // time an A/B of the program sizes its blocks by) count them all.
      double iterations = 1;
      if (const json* it = OptionalField(stats, spath, "iterations"); it != nullptr && it->is_number()) {
        iterations = std::max(1.0, it->get<double>());
      }
      for (size_t r = 0; r < data->size(); ++r) {
        c.samples.push_back({static_cast<uint32_t>(r), {Seconds((*data)[r], Index(dpath, r))}, false});
        c.sample_seconds += c.samples.back().values[0] * iterations;
      }
    }
    if (c.samples.empty()) {
      ++summary_only;
      c.samples.push_back({0, {Seconds(Field(stats, spath, "median"), Member(spath, "median"))}, false});
      c.reason = "summary only";
    }
    c.status = CaseStatus::kOk;
    c.noise = NoiseOfFirstMetric(c);
    set.cases.push_back(std::move(c));
  }
  if (summary_only != 0) {
    set.notes.push_back(absl::StrCat(summary_only, " of ", benchmarks.size(),
                                     " benchmarks hold no per-round times (stats.data): one sample each, the "
                                     "median; write the file with --benchmark-json (or save with --benchmark-save-data) to gate on every "
                                     "round"));
  }
  return set;
}

bool LooksLikePytestBenchmark(const json& root) {
  return root.contains("benchmarks") &&
         (root.contains("machine_info") || FirstEntryHas(root, "benchmarks", "stats"));
}

}  // namespace

extern const Format kPytestBenchmarkFormat{
    "pytest-benchmark",
    "pytest-benchmark JSON (pytest --benchmark-json=F: \"machine_info\" and \"benchmarks\"[].\"stats\")",
    LooksLikePytestBenchmark,
    [](const json& root, const std::string&) { return ReadPytestBenchmark(root); },
    nullptr,
    nullptr,
};

}  // namespace perfgate::formats
