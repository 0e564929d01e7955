#include "wire/validate.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/identity.h"
#include "common/run_types.h"
#include "common/status_macros.h"
#include "wire/convert.h"
#include "wire/field_error.h"

namespace perfgate::wire {
namespace {

// A key or value quoted in a message: printable ASCII only, cut short.
std::string Quoted(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return absl::StrCat("'", out, s.size() > 40 ? "...'" : "'");
}

// A map key named in a message, whatever its bytes: C-escaped, cut short.
std::string EscapedKey(const std::string& k) {
  return absl::StrCat("\"", absl::CHexEscape(absl::string_view(k).substr(0, 40)), k.size() > 40 ? "...\"" : "\"");
}

// A map of text to text: entry count, key and value limits, total bytes.
struct MapLimits {
  size_t entries;
  size_t key;
  size_t value;
  size_t total;
};

absl::Status CheckMap(const google::protobuf::RepeatedPtrField<v1::TextEntry>& m, const std::string& field,
                      const MapLimits& limits) {
  if (static_cast<size_t>(m.size()) > limits.entries) {
    return FieldError(field, absl::StrCat(m.size(), " entries; at most ", limits.entries));
  }
  size_t total = 0;
  std::set<std::string_view> keys;
  for (const v1::TextEntry& e : m) {
    const std::string& k = e.key();
    PERFGATE_RETURN_IF_ERROR(CheckText(k, absl::StrCat(field, " key ", EscapedKey(k)), limits.key, true, true));
    if (!keys.insert(k).second) return FieldError(absl::StrCat(field, " key ", EscapedKey(k)), "is given twice");
    if (auto s = CheckText(e.value(), absl::StrCat(field, "[", Quoted(k), "]"), limits.value, false, false);
        !s.ok()) {
      return s;
    }
    total += k.size() + e.value().size();
  }
  if (total > limits.total) {
    return FieldError(field, absl::StrCat(total, " bytes of keys and values; at most ", limits.total));
  }
  return absl::OkStatus();
}

absl::Status CheckEnvironment(const v1::Environment& e, const std::string& field) {
  PERFGATE_RETURN_IF_ERROR(CheckText(e.sku(), field + ".sku", kMaxSku, true, true));
  return CheckMap(e.fields(), field + ".fields",
                  {kMaxEnvironmentFields, kMaxDetailKey, kMaxEnvironmentValue, kMaxEnvironmentBytes});
}

absl::Status CheckRunId(const std::string& run_id, const std::string& field) {
  if (!IsUuid(run_id)) return FieldError(field, absl::StrCat(Quoted(run_id), " is not a UUID"));
  return absl::OkStatus();
}

// Metric names build keys and reports: a line without / { } , =.
absl::Status CheckMetricName(const std::string& name, const std::string& field) {
  PERFGATE_RETURN_IF_ERROR(CheckText(name, field, kMaxMetricName, true, true));
  if (name.find_first_of("/{},=") != std::string::npos) return FieldError(field, "must not hold / { } , =");
  return absl::OkStatus();
}

absl::Status CheckDirection(v1::Direction d, const std::string& field) {
  if (d != v1::HIGHER_IS_BETTER && d != v1::LOWER_IS_BETTER) {
    return FieldError(field, "must be HIGHER_IS_BETTER or LOWER_IS_BETTER");
  }
  return absl::OkStatus();
}

absl::Status CheckMetrics(const v1::CaseResult& c, const std::string& field) {
  if (c.metrics().empty()) return FieldError(field + ".metrics", "a case needs at least one metric");
  if (static_cast<size_t>(c.metrics_size()) > kMaxMetricsPerCase) {
    return FieldError(field + ".metrics", absl::StrCat(c.metrics_size(), " metrics; at most ", kMaxMetricsPerCase));
  }
  std::set<std::string> names;
  for (int i = 0; i < c.metrics_size(); ++i) {
    const v1::MetricSpec& m = c.metrics(i);
    const std::string f = absl::StrCat(field, ".metrics[", i, "]");
    PERFGATE_RETURN_IF_ERROR(CheckMetricName(m.name(), f + ".name"));
    if (!names.insert(m.name()).second) return FieldError(f + ".name", absl::StrCat(Quoted(m.name()), " appears twice"));
    PERFGATE_RETURN_IF_ERROR(CheckText(m.unit(), f + ".unit", kMaxUnit, true, true));
    PERFGATE_RETURN_IF_ERROR(CheckDirection(m.direction(), f + ".direction"));
  }
  return absl::OkStatus();
}

absl::Status CheckSamples(const v1::CaseResult& c, const std::string& field) {
  for (int i = 0; i < c.samples_size(); ++i) {
    const v1::Sample& s = c.samples(i);
    // The field's name is made only for an error: a batch has 100 000 samples.
    auto f = [&] { return absl::StrCat(field, ".samples[", i, "]"); };
    if (s.index() > kMaxSampleIndex) {
      return FieldError(f() + ".index", absl::StrCat(s.index(), " is above ", kMaxSampleIndex));
    }
    if (s.values_size() != c.metrics_size()) {
      return FieldError(f() + ".values", absl::StrCat("has ", s.values_size(), " values for ", c.metrics_size(), " metrics"));
    }
    for (int j = 0; j < s.values_size(); ++j) {
      if (!std::isfinite(s.values(j))) {
        return FieldError(absl::StrCat(f(), ".values[", j, "]"), absl::StrCat(s.values(j), " is not a finite number"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsUtf8(std::string_view s) {
  size_t i = 0;
  const size_t n = s.size();
  while (i < n) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      len = 2, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4, cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > n) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += len;
  }
  return true;
}

absl::Status CheckText(std::string_view s, const std::string& field, size_t max, bool required, bool line) {
  if (required && s.empty()) return FieldError(field, "must not be empty");
  if (s.size() > max) return FieldError(field, absl::StrCat("is ", s.size(), " bytes; at most ", max));
  if (s.find('\0') != std::string_view::npos) return FieldError(field, "holds a NUL byte");
  if (!IsUtf8(s)) return FieldError(field, "is not valid UTF-8");
  if (line && std::any_of(s.begin(), s.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
      })) {
    return FieldError(field, "holds a control character");
  }
  return absl::OkStatus();
}

absl::Status CheckTimestamp(const google::protobuf::Timestamp& t, const std::string& field) {
  if (t.seconds() < 0 || t.seconds() >= kMaxTimestampSeconds || t.nanos() < 0 || t.nanos() > 999999999) {
    return FieldError(field, absl::StrCat("seconds ", t.seconds(), " nanos ", t.nanos(),
                                   " is outside 1970-01-01 to 2100-01-01"));
  }
  return absl::OkStatus();
}

absl::Status ValidateRegisterAgent(const v1::RegisterAgentRequest& r) {
  PERFGATE_RETURN_IF_ERROR(CheckText(r.name(), "name", kMaxAgentName, true, true));
  PERFGATE_RETURN_IF_ERROR(CheckText(r.hostname(), "hostname", kMaxHostname, false, true));
  return CheckText(r.version(), "version", kMaxVersion, false, true);
}

absl::Status ValidateOpenRun(const v1::OpenRunRequest& r) {
  PERFGATE_RETURN_IF_ERROR(CheckRunId(r.run_id(), "run_id"));
  struct Line {
    const std::string& value;
    const char* field;
    size_t max;
    bool required;
  };
  for (const Line& l : {Line{r.agent_name(), "agent_name", kMaxAgentName, true},
                        Line{r.repo(), "repo", kMaxRepo, false}, Line{r.branch(), "branch", kMaxBranch, true},
                        Line{r.commit(), "commit", kMaxCommit, false}, Line{r.ci_job(), "ci_job", kMaxCiJob, false},
                        Line{r.node(), "node", kMaxNode, false}}) {
    PERFGATE_RETURN_IF_ERROR(CheckText(l.value, l.field, l.max, l.required, true));
  }
  PERFGATE_RETURN_IF_ERROR(CheckEnvironment(r.environment(), "environment"));
  if (r.trigger() != v1::TRIGGER_CI && r.trigger() != v1::TRIGGER_SWEEP && r.trigger() != v1::TRIGGER_MANUAL) {
    return FieldError("trigger", "must be TRIGGER_CI, TRIGGER_SWEEP or TRIGGER_MANUAL");
  }
  if (!r.has_started_at()) return FieldError("started_at", "must be set");
  PERFGATE_RETURN_IF_ERROR(CheckTimestamp(r.started_at(), "started_at"));
  if (static_cast<size_t>(r.parent_commits_size()) > kMaxParentCommits) {
    return FieldError("parent_commits", absl::StrCat(r.parent_commits_size(), " commits; at most ", kMaxParentCommits));
  }
  for (int i = 0; i < r.parent_commits_size(); ++i) {
    if (auto s = CheckText(r.parent_commits(i), absl::StrCat("parent_commits[", i, "]"), kMaxCommit, true, true);
        !s.ok()) {
      return s;
    }
  }
  return CheckMap(r.details(), "details", {kMaxDetails, kMaxDetailKey, kMaxDetailValue, kMaxDetailsBytes});
}

absl::Status ValidateCase(const v1::CaseResult& c, const std::string& field) {
  BenchmarkId id;
  id.suite = c.benchmark().suite();
  id.name = c.benchmark().name();
  for (const v1::TextEntry& e : c.benchmark().params()) {
    const std::string where = absl::StrCat(field, ".benchmark.params key ", EscapedKey(e.key()));
    if (!IsUtf8(e.key())) return FieldError(where, "is not valid UTF-8");
    if (!IsUtf8(e.value())) return FieldError(where, "its value is not valid UTF-8");
    if (!id.params.emplace(e.key(), e.value()).second) return FieldError(where, "is given twice");
  }
  PERFGATE_RETURN_IF_ERROR(ValidateBenchmarkId(id, field + ".benchmark"));
  PERFGATE_RETURN_IF_ERROR(CheckMetrics(c, field));
  PERFGATE_RETURN_IF_ERROR(CheckSamples(c, field));
  switch (c.status()) {
    case v1::CASE_STATUS_UNSPECIFIED:
    case v1::CASE_OK:
    case v1::CASE_TIMED_OUT:
    case v1::CASE_SKIPPED:
    case v1::CASE_FAILED:
      break;
    default:
      return FieldError(field + ".status", "unknown case status");
  }
  PERFGATE_RETURN_IF_ERROR(CheckText(c.reason(), field + ".reason", kMaxReason, false, false));
  if (!std::isfinite(c.noise()) || c.noise() < 0) return FieldError(field + ".noise", "must be finite and >= 0");
  return BoundFromProto(c, field).status();
}

absl::Status ValidateBatch(const v1::ResultBatch& b) {
  PERFGATE_RETURN_IF_ERROR(CheckRunId(b.run_id(), "run_id"));
  if (b.sequence() == 0 || b.sequence() > static_cast<uint64_t>(INT64_MAX)) {
    return FieldError("sequence", absl::StrCat(b.sequence(), " is out of range; sequences start at 1"));
  }
  if (b.cases().empty()) return FieldError("cases", "a batch carries at least one case");
  if (static_cast<size_t>(b.cases_size()) > kMaxCasesPerBatch) {
    return FieldError("cases", absl::StrCat(b.cases_size(), " cases; at most ", kMaxCasesPerBatch));
  }
  // Indices per benchmark key over the whole batch: a case may span parts.
  std::map<std::string, std::vector<uint32_t>> indices;
  for (int i = 0; i < b.cases_size(); ++i) {
    const std::string field = absl::StrCat("cases[", i, "]");
    PERFGATE_RETURN_IF_ERROR(ValidateCase(b.cases(i), field));
    const BenchmarkId id = FromProto(b.cases(i).benchmark());
    std::vector<uint32_t>& seen = indices[id.Key()];
    for (const v1::Sample& s : b.cases(i).samples()) seen.push_back(s.index());
  }
  if (absl::Status s = CheckSampleIndicesOnce(std::move(indices)); !s.ok()) return FieldError("cases", std::string(s.message()));
  return absl::OkStatus();
}

absl::Status ValidateCloseRun(const v1::CloseRunRequest& r) {
  PERFGATE_RETURN_IF_ERROR(CheckRunId(r.run_id(), "run_id"));
  if (r.status() != v1::RUN_COMPLETE && r.status() != v1::RUN_FAILED) {
    return FieldError("status", "a run is closed as RUN_COMPLETE or RUN_FAILED");
  }
  if (r.last_sequence() > static_cast<uint64_t>(INT64_MAX)) return FieldError("last_sequence", "is out of range");
  PERFGATE_RETURN_IF_ERROR(CheckText(r.reason(), "reason", kMaxReason, false, false));
  if (static_cast<size_t>(r.invalid_reasons_size()) > kMaxInvalidReasons) {
    return FieldError("invalid_reasons", absl::StrCat(r.invalid_reasons_size(), " reasons; at most ", kMaxInvalidReasons));
  }
  for (int i = 0; i < r.invalid_reasons_size(); ++i) {
    if (auto s = CheckText(r.invalid_reasons(i), absl::StrCat("invalid_reasons[", i, "]"), kMaxInvalidReason,
                           true, false);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePutCalibration(const v1::PutCalibrationRequest& r) {
  PERFGATE_RETURN_IF_ERROR(CheckText(r.agent_name(), "agent_name", kMaxAgentName, true, true));
  PERFGATE_RETURN_IF_ERROR(CheckText(r.node(), "node", kMaxNode, true, true));
  PERFGATE_RETURN_IF_ERROR(CheckEnvironment(r.environment(), "environment"));
  if (!r.has_measured_at()) return FieldError("measured_at", "must be set");
  PERFGATE_RETURN_IF_ERROR(CheckTimestamp(r.measured_at(), "measured_at"));
  if (r.entries().empty()) return FieldError("entries", "a calibration carries at least one entry");
  if (static_cast<size_t>(r.entries_size()) > kMaxCalibrationEntries) {
    return FieldError("entries", absl::StrCat(r.entries_size(), " entries; at most ", kMaxCalibrationEntries));
  }
  for (int i = 0; i < r.entries_size(); ++i) {
    const v1::CalibrationEntry& e = r.entries(i);
    const std::string f = absl::StrCat("entries[", i, "]");
    PERFGATE_RETURN_IF_ERROR(CheckText(e.benchmark(), f + ".benchmark", 8192, true, true));
    if (auto id = ParseBenchmarkKey(e.benchmark()); !id.ok()) return FieldError(f + ".benchmark", std::string(id.status().message()));
    PERFGATE_RETURN_IF_ERROR(CheckMetricName(e.metric(), f + ".metric"));
    PERFGATE_RETURN_IF_ERROR(CheckText(e.unit(), f + ".unit", kMaxUnit, true, true));
    PERFGATE_RETURN_IF_ERROR(CheckDirection(e.direction(), f + ".direction"));
  }
  return absl::OkStatus();
}

}  // namespace perfgate::wire
