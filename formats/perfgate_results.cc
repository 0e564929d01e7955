// perfgate's own result file: what `perfgate-agent run --output` writes and
// every perfgate command reads back exactly.
#include <cmath>
#include <cstdint>
#include <set>

#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "formats/json_fields.h"
#include "formats/result_file.h"

namespace perfgate::formats {
namespace {

TimePoint ParseTime(const std::string& s, const std::string& path) {
  auto t = ParseUtcTime(s);
  if (!t.ok()) Throw(path, std::string(t.status().message()));
  return *t;
}

BenchmarkId ReadBenchmark(const json& c, const std::string& path) {
  BenchmarkId id;
  const json& b = Field(c, path, "benchmark");
  const std::string bpath = Member(path, "benchmark");
  id.suite = String(Field(b, bpath, "suite"), Member(bpath, "suite"));
  id.name = String(Field(b, bpath, "name"), Member(bpath, "name"));
  if (const json* params = OptionalField(b, bpath, "params")) {
    if (!params->is_object()) Throw(Member(bpath, "params"), "not an object");
    for (const auto& [k, v] : params->items()) id.params[k] = String(v, absl::StrCat(bpath, ".params.", k));
  }
  if (absl::Status s = ValidateBenchmarkId(id, bpath); !s.ok()) Throw("", std::string(s.message()));
  return id;
}

MetricSpec ReadMetric(const json& m, const std::string& mpath) {
  MetricSpec spec;
  spec.name = String(Field(m, mpath, "name"), Member(mpath, "name"));
  spec.unit = String(Field(m, mpath, "unit"), Member(mpath, "unit"));
  const std::string dir = String(Field(m, mpath, "direction"), Member(mpath, "direction"));
  if (!ParseDirection(dir, &spec.direction)) {
    Throw(Member(mpath, "direction"), absl::StrCat("'", dir, "' is neither higher_is_better nor lower_is_better"));
  }
  return spec;
}

Sample ReadSample(const json& s, const std::string& spath, size_t metrics) {
  Sample sample;
  const json& index = Field(s, spath, "index");
  // Stored as a 32-bit signed integer: a larger index would wrap.
  if (!index.is_number_unsigned() || index.get<uint64_t>() > kMaxSampleIndex) {
    Throw(Member(spath, "index"), absl::StrCat("not an integer from 0 to ", kMaxSampleIndex));
  }
  sample.index = static_cast<uint32_t>(index.get<uint64_t>());
  if (const json* t = OptionalField(s, spath, "throttled")) sample.throttled = Bool(*t, Member(spath, "throttled"));
  const json& values = Array(Field(s, spath, "values"), Member(spath, "values"));
  if (values.size() != metrics) {
    Throw(Member(spath, "values"), absl::StrCat(values.size(), " values for ", metrics, " metrics"));
  }
  for (size_t v = 0; v < values.size(); ++v) {
    const double d = Number(values[v], Index(Member(spath, "values"), v));
    if (!std::isfinite(d)) Throw(Index(Member(spath, "values"), v), "not finite");
    sample.values.push_back(d);
  }
  return sample;
}

CaseResult ReadCase(const json& c, const std::string& path) {
  CaseResult r;
  r.benchmark = ReadBenchmark(c, path);
  const std::string status = String(Field(c, path, "status"), Member(path, "status"));
  if (!ParseCaseStatus(status, &r.status)) Throw(Member(path, "status"), absl::StrCat("unknown status '", status, "'"));
  if (const json* v = OptionalField(c, path, "reason")) r.reason = String(*v, Member(path, "reason"));
  if (const json* v = OptionalField(c, path, "noise")) r.noise = Number(*v, Member(path, "noise"));
  if (const json* v = OptionalField(c, path, "seconds")) r.seconds = Number(*v, Member(path, "seconds"));
  if (const json* v = OptionalField(c, path, "sample_seconds")) {
    r.sample_seconds = Number(*v, Member(path, "sample_seconds"));
  }
  const json& metrics = Array(Field(c, path, "metrics"), Member(path, "metrics"));
  for (size_t m = 0; m < metrics.size(); ++m) r.metrics.push_back(ReadMetric(metrics[m], Index(Member(path, "metrics"), m)));
  const json& samples = Array(Field(c, path, "samples"), Member(path, "samples"));
  for (size_t s = 0; s < samples.size(); ++s) {
    r.samples.push_back(ReadSample(samples[s], Index(Member(path, "samples"), s), r.metrics.size()));
  }
  return r;
}

}  // namespace

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
    CaseResult r = ReadCase(cases[i], path);
    if (!keys.insert(r.benchmark.Key()).second) Throw(path, absl::StrCat(r.benchmark.Key(), " appears twice"));
    set.cases.push_back(std::move(r));
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
