// Bencher Metric Format (BMF) JSON, read and written
// (https://bencher.dev/docs/reference/bencher-metric-format/):
// {"benchmark": {"measure": {"value": v, "lower_value": l, "upper_value": u}}}.
// Reading: one case per benchmark, one metric per measure, one sample (the
// value). Writing: each metric's median as the value, min and max as bounds.
#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "common/stats.h"
#include "formats/format_registry.h"
#include "formats/json_fields.h"

namespace perfgate::formats {
namespace {

// Bencher's built-in measures, by slug: unit and direction; any other
// measure is named like a user counter (CounterDirection) with unit "value".
MetricSpec MeasureSpec(const std::string& measure) {
  static const std::map<std::string, MetricSpec> kKnown = {
      {"latency", {"latency", "ns", Direction::kLowerIsBetter}},
      {"throughput", {"throughput", "ops/s", Direction::kHigherIsBetter}},
      {"build-time", {"build-time", "s", Direction::kLowerIsBetter}},
      {"file-size", {"file-size", "bytes", Direction::kLowerIsBetter}},
  };
  if (auto it = kKnown.find(measure); it != kKnown.end()) return it->second;
  return {MetricToken(measure), "value", CounterDirection(measure)};
}

// Bencher's built-in measures are times, rates and sizes: none can be
// negative. A measure of the user's own (a delta, a score) may be.
bool NeverNegative(const std::string& measure) {
  return measure == "latency" || measure == "throughput" || measure == "build-time" || measure == "file-size";
}

// A measure's value and bounds: finite, lower <= value <= upper, and not
// negative for a built-in measure; a FormatError names the field otherwise
// (a value of -1e308 between bounds of 1e308 and -1 would be compared).
double CheckedValue(const json& m, const std::string& measure, const std::string& mpath, bool* bounds) {
  const std::string vpath = Member(mpath, "value");
  const double v = Number(Field(m, mpath, "value"), vpath);
  if (!std::isfinite(v)) Throw(vpath, absl::StrCat(v, " is not finite"));
  const bool never_negative = NeverNegative(measure);
  if (never_negative && v < 0) Throw(vpath, absl::StrCat(v, " is negative: a ", measure, " cannot be"));
  for (const char* bound : {"lower_value", "upper_value"}) {
    const json* b = OptionalField(m, mpath, bound);
    if (b == nullptr || b->is_null()) continue;
    const std::string bpath = Member(mpath, bound);
    const double d = Number(*b, bpath);
    if (!std::isfinite(d)) Throw(bpath, absl::StrCat(d, " is not finite"));
    if (never_negative && d < 0) Throw(bpath, absl::StrCat(d, " is negative: a ", measure, " cannot be"));
    const bool lower = bound[0] == 'l';
    if (lower ? d > v : d < v) {
      Throw(bpath, absl::StrCat(d, " is ", lower ? "above" : "below", " the value ", v,
                                ": lower_value <= value <= upper_value"));
    }
    *bounds = true;
  }
  return v;
}

// A benchmark named like a perfgate key keeps its identity (so that a file
// perfgate wrote reads back to the same cases); any other name is the
// name of a case of suite "bencher".
BenchmarkId BencherId(const std::string& name) {
  if (auto id = ParseBenchmarkKey(name); id.ok()) return *id;
  return {"bencher", NameToken(name), {}};
}

bool LooksLikeBencher(const json& root) {
  if (!root.is_object() || root.empty()) return false;
  const json& first = root.begin().value();
  if (!first.is_object() || first.empty()) return false;
  const json& measure = first.begin().value();
  return measure.is_object() && measure.contains("value");
}

ResultSet ReadBencher(const json& root) {
  ResultSet set;
  std::map<std::string, std::string> name_of_key;
  bool bounds = false;
  for (const auto& [name, measures] : root.items()) {
    const std::string path = name;
    if (!measures.is_object()) Throw(path, absl::StrCat("not an object of measures (", measures.type_name(), ")"));
    if (measures.empty()) Throw(path, "no measures");
    CaseResult c;
    c.benchmark = BencherId(name);
    if (auto [other, fresh] = name_of_key.try_emplace(c.benchmark.Key(), name); !fresh) {
      Throw(path, absl::StrCat("'", name, "' and '", other->second, "' both map to ", c.benchmark.Key()));
    }
    Sample sample;
    for (const auto& [measure, m] : measures.items()) {
      const double v = CheckedValue(m, measure, Member(path, measure), &bounds);
      c.metrics.push_back(MeasureSpec(measure));
      sample.values.push_back(v);
    }
    c.samples.push_back(std::move(sample));
    c.status = CaseStatus::kOk;
    set.cases.push_back(std::move(c));
  }
  if (bounds) set.notes.push_back("lower_value and upper_value are bounds, not samples: each measure's value is its one sample");
  return set;
}

}  // namespace

extern const Format kBencherFormat{
    "bencher-bmf",
    "Bencher Metric Format JSON ({\"bench\": {\"measure\": {\"value\": v}}})",
    LooksLikeBencher,
    [](const json& root, const std::string&) { return ReadBencher(root); },
    nullptr,
    nullptr,
};

}  // namespace perfgate::formats

namespace perfgate {

std::string WriteBencherJson(const std::vector<ResultSet>& sets) {
  // case key -> metric name -> every unthrottled value, over all sets.
  std::map<std::string, std::map<std::string, std::vector<double>>> values;
  for (const ResultSet& set : sets) {
    for (const CaseResult& c : set.cases) {
      for (const Sample& s : c.samples) {
        if (s.throttled) continue;
        for (size_t m = 0; m < c.metrics.size() && m < s.values.size(); ++m) {
          values[c.benchmark.Key()][c.metrics[m].name].push_back(s.values[m]);
        }
      }
    }
  }
  formats::ojson out = formats::ojson::object();
  for (auto& [key, metrics] : values) {
    for (auto& [metric, v] : metrics) {
      const auto [low, high] = std::minmax_element(v.begin(), v.end());
      out[key][metric] = {{"value", stats::Median(v)}, {"lower_value", *low}, {"upper_value", *high}};
    }
  }
  return out.dump(2) + "\n";
}

}  // namespace perfgate
