// hyperfine's JSON (hyperfine --export-json F; src/export/json.rs): one case
// per command, one sample per timed run (times[]); user and system time and
// peak memory are metrics too where the file gives them per run.
#include <cmath>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "formats/format_registry.h"
#include "formats/json_fields.h"

namespace perfgate::formats {
namespace {

// A per-run array of `key` with one entry per run, or nullptr when the file
// gives none (hyperfine writes user and system as means: they are not used).
const json* PerRun(const json& r, const std::string& path, const char* key, size_t runs) {
  const json* v = OptionalField(r, path, key);
  if (v == nullptr || !v->is_array()) return nullptr;
  if (v->size() != runs) {
    Throw(Member(path, key), absl::StrCat(v->size(), " values where times holds ", runs));
  }
  return v;
}

double NonNegative(const json& v, const std::string& path, const char* what) {
  const double d = Number(v, path);
  if (!std::isfinite(d) || d < 0) Throw(path, absl::StrCat(d, " is not ", what));
  return d;
}

// exit_codes: a run that failed (non-zero, or null: killed by a signal) fails
// the case; hyperfine times such runs only under --ignore-failure.
std::string FailedRuns(const json& r, const std::string& path) {
  const json* codes = OptionalField(r, path, "exit_codes");
  if (codes == nullptr) return "";
  Array(*codes, Member(path, "exit_codes"));
  size_t failed = 0;
  std::string first;
  for (size_t i = 0; i < codes->size(); ++i) {
    const json& code = (*codes)[i];
    if (code.is_number_integer() && code.get<int64_t>() == 0) continue;
    if (!code.is_null() && !code.is_number_integer()) {
      Throw(Index(Member(path, "exit_codes"), i), absl::StrCat("not an exit code (", code.type_name(), ")"));
    }
    if (failed++ == 0) {
      first = code.is_null() ? absl::StrCat("run ", i, " was killed by a signal")
                             : absl::StrCat("run ", i, " exited with ", code.get<int64_t>());
    }
  }
  if (failed == 0) return "";
  return absl::StrCat(failed, " of ", codes->size(), " runs failed (", first, ")");
}

CaseResult ReadCommand(const json& r, const std::string& path, size_t* summary_only) {
  CaseResult c;
  c.benchmark.suite = "hyperfine";
  c.benchmark.name = NameToken(String(Field(r, path, "command"), Member(path, "command")));
  if (const json* params = OptionalField(r, path, "parameters"); params != nullptr && !params->is_null()) {
    if (!params->is_object()) Throw(Member(path, "parameters"), "not an object");
    for (const auto& [k, v] : params->items()) c.benchmark.params[NameToken(k)] = Token(Text(v));
  }
  c.metrics = {{"time", "s", Direction::kLowerIsBetter}};
  const json* times = OptionalField(r, path, "times");
  if (times == nullptr || times->is_null()) {
    // Releases before 1.6 kept no per-run times.
    ++*summary_only;
    const json* median = OptionalField(r, path, "median");
    const char* key = median != nullptr ? "median" : "mean";
    c.samples.push_back({0, {NonNegative(Field(r, path, key), Member(path, key), "a time")}, false});
    c.reason = "summary only";
  } else {
    const std::string tpath = Member(path, "times");
    Array(*times, tpath);
    if (times->empty()) Throw(tpath, "empty: no run was timed");
    if (times->size() > kMaxSampleIndex) Throw(tpath, "more runs than perfgate stores");
    const size_t runs = times->size();
    const json* user = PerRun(r, path, "user", runs);
    const json* system = PerRun(r, path, "system", runs);
    const json* memory = PerRun(r, path, "memory_usage_byte", runs);
    if (user != nullptr) c.metrics.push_back({"user_time", "s", Direction::kLowerIsBetter});
    if (system != nullptr) c.metrics.push_back({"system_time", "s", Direction::kLowerIsBetter});
    if (memory != nullptr) c.metrics.push_back({"max_rss", "bytes", Direction::kLowerIsBetter});
    for (size_t i = 0; i < runs; ++i) {
      Sample s{static_cast<uint32_t>(i), {NonNegative((*times)[i], Index(tpath, i), "a time")}, false};
      for (const auto& [list, key] : {std::pair(user, "user"), std::pair(system, "system"),
                                      std::pair(memory, "memory_usage_byte")}) {
        if (list != nullptr) s.values.push_back(NonNegative((*list)[i], Index(Member(path, key), i), "a value"));
      }
      c.sample_seconds += s.values[0];  // the runs' own wall time
      c.samples.push_back(std::move(s));
    }
  }
  c.status = CaseStatus::kOk;
  if (const std::string failed = FailedRuns(r, path); !failed.empty()) {
    c.status = CaseStatus::kFailed;
    c.reason = failed;
    c.samples.clear();
  }
  c.noise = NoiseOfFirstMetric(c);
  return c;
}

ResultSet ReadHyperfine(const json& root) {
  ResultSet set;
  const json& results = ResultList(root, "results");
  std::set<std::string> keys;
  size_t summary_only = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string path = Index("results", i);
    CaseResult c = ReadCommand(results[i], path, &summary_only);
    if (!keys.insert(c.benchmark.Key()).second) {
      Throw(Member(path, "command"), absl::StrCat("a second command with the key ", c.benchmark.Key(),
                                                  "; give each its own --command-name"));
    }
    set.cases.push_back(std::move(c));
  }
  if (summary_only != 0) {
    set.notes.push_back(absl::StrCat(summary_only, " commands hold no per-run times (hyperfine before 1.6): one "
                                     "sample each, the median (else the mean)"));
  }
  return set;
}

bool LooksLikeHyperfine(const json& root) {
  return root.contains("results") &&
         (FirstEntryHas(root, "results", "command") || FirstEntryHas(root, "results", "times"));
}

}  // namespace

extern const Format kHyperfineFormat{
    "hyperfine",
    "hyperfine JSON (hyperfine --export-json F: \"results\"[].\"command\")",
    LooksLikeHyperfine,
    [](const json& root, const std::string&) { return ReadHyperfine(root); },
    nullptr,
    nullptr,
};

}  // namespace perfgate::formats
