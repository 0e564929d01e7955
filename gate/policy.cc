#include "gate/policy.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "common/file_io.h"
#include "common/identity.h"
#include "common/status_macros.h"

namespace perfgate::gate {
namespace {

constexpr int kSupportedVersion = 1;
constexpr unsigned kMinHistory = 1;
constexpr unsigned kMaxHistory = 100;
// Ten years: a calibration older than that describes another machine.
constexpr double kMaxCalibrationAgeDays = 3650;

// The keys each kind of map accepts, in the order the documentation lists them.
const std::vector<absl::string_view> kTopKeys = {"version", "defaults", "rules", "skus"};
const std::vector<absl::string_view> kDefaultsKeys = {
    "tolerance", "gating",       "max_noise",           "history",
    "match",     "fdr",          "inconclusive",        "calibration_max_age",
    "ab",        "count_tolerance",     "sim_tolerance"};
const std::vector<absl::string_view> kRuleKeys = {"benchmark", "metric",    "tolerance", "floor",
                                                  "gating",    "max_noise", "ab"};
const std::vector<absl::string_view> kSkuKeys = {"pattern",   "tolerance", "gating", "max_noise",
                                                 "match",     "rules",     "ab"};
const std::vector<absl::string_view> kAbKeys = {"tolerance", "max_noise", "gating"};
const std::vector<absl::string_view> kInconclusiveValues = {"report", "fail", "pass"};

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

const char* TypeName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Undefined:
      break;
  }
  return "an undefined node";
}

// A policy is small enough that one pass with early returns reads best; the
// parser keeps the file name so every error can point at a line.
class PolicyParser {
 public:
  explicit PolicyParser(const std::string& file_name) : file_name_(file_name) {}

  absl::Status Error(const YAML::Mark& mark, absl::string_view reason) const {
    // yaml-cpp counts lines from 0; people and editors count from 1. A null
    // mark (a node made up rather than read) has line -1: point at line 1.
    const int line = mark.is_null() || mark.line < 0 ? 1 : mark.line + 1;
    return absl::InvalidArgumentError(absl::StrCat(file_name_, ":", line, ": ", reason));
  }

  // Checks that `node` is a map with only `allowed` keys, each once, and a
  // value for each key not in `may_be_empty`.
  absl::Status CheckMap(const YAML::Node& node, absl::string_view where,
                        const std::vector<absl::string_view>& allowed,
                        const std::vector<absl::string_view>& may_be_empty = {}) const {
    if (!node.IsMap()) {
      return Error(node.Mark(),
                   absl::StrCat(where, " must be a map (key: value lines), got ", TypeName(node)));
    }
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const YAML::Node& key = entry.first;
      if (!key.IsScalar()) {
        return Error(key.Mark(), absl::StrCat("a key in ", where, " must be a plain name, got ",
                                              TypeName(key)));
      }
      const std::string& name = key.Scalar();
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        std::string reason = absl::StrCat("unknown key '", name, "'");
        absl::string_view closest;
        size_t best = 3;  // suggest only within an edit distance of 2
        for (absl::string_view candidate : allowed) {
          const size_t d = EditDistance(name, candidate);
          if (d < best) {
            best = d;
            closest = candidate;
          }
        }
        if (!closest.empty()) absl::StrAppend(&reason, " (did you mean '", closest, "'?)");
        absl::StrAppend(&reason, " in ", where, "; allowed keys: ", absl::StrJoin(allowed, ", "));
        return Error(key.Mark(), reason);
      }
      // yaml-cpp keeps both entries of a repeated key and lookups see only
      // the first; refusing the file is clearer than silently using one.
      if (!seen.insert(name).second) {
        return Error(key.Mark(),
                     absl::StrCat("key '", name, "' appears twice in ", where, "; keep one"));
      }
      // An empty value would otherwise be blamed on the line after the key.
      if (entry.second.IsNull() &&
          std::find(may_be_empty.begin(), may_be_empty.end(), name) == may_be_empty.end()) {
        return Error(key.Mark(), absl::StrCat("key '", name, "' in ", where,
                                              " has no value; give one or remove the key"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ParseTolerance(const YAML::Node& node, std::optional<double>* out) const {
    return ParsePercent(node, "tolerance", out);
  }

  absl::Status ParsePercent(const YAML::Node& node, absl::string_view name,
                            std::optional<double>* out) const {
    const std::string hint =
        "expected a percentage with a % sign, at least 0% and below 100%, e.g. 3% or 2.5%";
    if (!node.IsScalar()) {
      return Error(node.Mark(), absl::StrCat(name, " must be a percentage, got ", TypeName(node),
                                             "; ", hint));
    }
    const std::string& text = node.Scalar();
    absl::string_view digits = absl::StripAsciiWhitespace(text);
    // A bare number is refused rather than guessed: "5" could mean 5 % or 500 %.
    bool ok = absl::ConsumeSuffix(&digits, "%");
    digits = absl::StripTrailingAsciiWhitespace(digits);
    ok = ok && !digits.empty() &&
         std::all_of(digits.begin(), digits.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == '.'; }) &&
         std::count(digits.begin(), digits.end(), '.') <= 1 && digits.front() != '.' &&
         digits.back() != '.';
    double percent = 0;
    ok = ok && absl::SimpleAtod(digits, &percent) && std::isfinite(percent);
    if (!ok) {
      return Error(node.Mark(), absl::StrCat("bad ", name, " '", text, "'; ", hint));
    }
    if (percent >= 100) {
      return Error(node.Mark(), absl::StrCat(name, " '", text, "' is out of range; ", hint));
    }
    *out = percent / 100.0;
    return absl::OkStatus();
  }

  absl::Status ParseGating(const YAML::Node& node, std::optional<bool>* out) const {
    // Only the YAML 1.2 spellings: "yes"/"on" are booleans in some parsers and
    // strings in others, and a gate should not depend on which one reads it.
    static const std::vector<absl::string_view> kTrue = {"true", "True", "TRUE"};
    static const std::vector<absl::string_view> kFalse = {"false", "False", "FALSE"};
    if (node.IsScalar()) {
      const std::string& text = node.Scalar();
      if (std::find(kTrue.begin(), kTrue.end(), text) != kTrue.end()) {
        *out = true;
        return absl::OkStatus();
      }
      if (std::find(kFalse.begin(), kFalse.end(), text) != kFalse.end()) {
        *out = false;
        return absl::OkStatus();
      }
      return Error(node.Mark(), absl::StrCat("gating must be true or false, got '", text,
                                             "'; false makes a metric advisory"));
    }
    return Error(node.Mark(), absl::StrCat("gating must be true or false, got ", TypeName(node)));
  }

  absl::Status ParseFloor(const YAML::Node& node, std::optional<double>* out) const {
    double value = 0;
    if (!node.IsScalar() || !absl::SimpleAtod(node.Scalar(), &value) || !std::isfinite(value)) {
      const std::string got =
          node.IsScalar() ? absl::StrCat("'", node.Scalar(), "'") : std::string(TypeName(node));
      return Error(
          node.Mark(),
          absl::StrCat("floor must be a number in the metric's unit (e.g. 700), got ", got));
    }
    *out = value;
    return absl::OkStatus();
  }

  absl::Status ParseHistory(const YAML::Node& node, unsigned* out) const {
    const std::string range = absl::StrCat(kMinHistory, "..", kMaxHistory);
    int64_t value = 0;
    if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value)) {
      const std::string got =
          node.IsScalar() ? absl::StrCat("'", node.Scalar(), "'") : std::string(TypeName(node));
      return Error(node.Mark(), absl::StrCat("history must be a whole number of baseline runs (",
                                             range, "), got ", got));
    }
    if (value < static_cast<int64_t>(kMinHistory) || value > static_cast<int64_t>(kMaxHistory)) {
      return Error(node.Mark(), absl::StrCat("history ", value, " is out of range; expected ",
                                             range, " baseline runs"));
    }
    *out = static_cast<unsigned>(value);
    return absl::OkStatus();
  }

  absl::Status ParseMatch(const YAML::Node& node, std::vector<std::string>* out) const {
    const std::string hint =
        "expected a list of environment field names, e.g. [driver_version, "
        "cuda_runtime]";
    if (!node.IsSequence()) {
      return Error(node.Mark(),
                   absl::StrCat("match must be a list, got ", TypeName(node), "; ", hint));
    }
    out->clear();
    for (const auto& item : node) {
      if (!item.IsScalar() || item.Scalar().empty()) {
        return Error(item.Mark(), absl::StrCat("match entries must be field names, got ",
                                               TypeName(item), "; ", hint));
      }
      out->push_back(item.Scalar());
    }
    return absl::OkStatus();
  }

  absl::Status ParseAb(const YAML::Node& node, AbOverrides* out) const {
    if (auto s = CheckMap(node, "an 'ab' section (settings for A/B gates)", kAbKeys); !s.ok()) {
      return s;
    }
    for (const auto& entry : node) {
      const std::string& key = entry.first.Scalar();
      absl::Status s;
      if (key == "tolerance") {
        s = ParseTolerance(entry.second, &out->tolerance);
      } else if (key == "max_noise") {
        s = ParsePercent(entry.second, "max_noise", &out->max_noise);
      } else if (key == "gating") {
        s = ParseGating(entry.second, &out->gating);
      }
      PERFGATE_RETURN_IF_ERROR(s);
    }
    return absl::OkStatus();
  }

  absl::Status ParseInconclusive(const YAML::Node& node, InconclusiveAction* out) const {
    const std::string got = node.IsScalar() ? node.Scalar() : std::string(TypeName(node));
    if (node.IsScalar()) {
      if (got == "report") *out = InconclusiveAction::kReport;
      if (got == "fail") *out = InconclusiveAction::kFail;
      if (got == "pass") *out = InconclusiveAction::kPass;
      if (std::find(kInconclusiveValues.begin(), kInconclusiveValues.end(), got) !=
          kInconclusiveValues.end()) {
        return absl::OkStatus();
      }
    }
    return Error(node.Mark(),
                 absl::StrCat("inconclusive must be one of ", absl::StrJoin(kInconclusiveValues, ", "),
                              ", got '", got,
                              "'; report exits 3, fail exits 1, pass exits 0 when a gating metric "
                              "cannot be judged"));
  }

  absl::Status ParseFdr(const YAML::Node& node, double* out) const {
    std::optional<double> q;
    PERFGATE_RETURN_IF_ERROR(ParsePercent(node, "fdr", &q));
    if (*q <= 0) {
      return Error(node.Mark(), "fdr must be above 0%; 5% is the usual false-discovery rate");
    }
    *out = *q;
    return absl::OkStatus();
  }

  absl::Status ParseMaxAge(const YAML::Node& node, std::chrono::seconds* out) const {
    const std::string hint = "expected a number of days with a d, above 0d, e.g. 30d or 7.5d";
    if (!node.IsScalar()) {
      return Error(node.Mark(), absl::StrCat("calibration_max_age must be a duration, got ",
                                             TypeName(node), "; ", hint));
    }
    const std::string& text = node.Scalar();
    absl::string_view digits = absl::StripAsciiWhitespace(text);
    // A bare number is refused as for percentages: days, hours or seconds?
    bool ok = absl::ConsumeSuffix(&digits, "d") && !digits.empty() &&
              std::all_of(digits.begin(), digits.end(),
                          [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
    double days = 0;
    ok = ok && absl::SimpleAtod(digits, &days) && std::isfinite(days);
    if (!ok) return Error(node.Mark(), absl::StrCat("bad calibration_max_age '", text, "'; ", hint));
    if (days <= 0 || days > kMaxCalibrationAgeDays) {
      return Error(node.Mark(), absl::StrCat("calibration_max_age '", text, "' is out of range; ",
                                             hint, ", at most ", kMaxCalibrationAgeDays, "d"));
    }
    *out = std::chrono::seconds(static_cast<int64_t>(std::llround(days * 86400)));
    return absl::OkStatus();
  }

  absl::Status ParseGlob(const YAML::Node& node, absl::string_view key, std::string* out) const {
    if (!node.IsScalar() || node.Scalar().empty()) {
      return Error(node.Mark(), absl::StrCat(key,
                                             " must be a non-empty glob ('*' matches "
                                             "anything), got ",
                                             TypeName(node)));
    }
    *out = node.Scalar();
    return absl::OkStatus();
  }

  absl::Status ParseRules(const YAML::Node& node, absl::string_view where,
                          std::vector<PolicyRule>* out) const {
    if (!node.IsSequence()) {
      return Error(node.Mark(), absl::StrCat("rules in ", where,
                                             " must be a list of maps (lines starting with "
                                             "'- '), got ",
                                             TypeName(node)));
    }
    for (const auto& item : node) {
      PolicyRule rule;
      rule.line = item.Mark().line + 1;
      PERFGATE_RETURN_IF_ERROR(CheckMap(item, "a rule", kRuleKeys));
      for (const auto& entry : item) {
        const std::string& key = entry.first.Scalar();
        const YAML::Node& value = entry.second;
        absl::Status s;
        if (key == "benchmark") {
          s = ParseGlob(value, key, &rule.benchmark);
        } else if (key == "metric") {
          s = ParseGlob(value, key, &rule.metric);
        } else if (key == "tolerance") {
          s = ParseTolerance(value, &rule.tolerance);
        } else if (key == "floor") {
          s = ParseFloor(value, &rule.floor);
        } else if (key == "gating") {
          s = ParseGating(value, &rule.gating);
        } else if (key == "max_noise") {
          s = ParsePercent(value, "max_noise", &rule.max_noise);
        } else if (key == "ab") {
          s = ParseAb(value, &rule.ab);
        }
        PERFGATE_RETURN_IF_ERROR(s);
      }
      if (!rule.tolerance && !rule.floor && !rule.gating && !rule.max_noise &&
          !rule.ab.tolerance && !rule.ab.max_noise && !rule.ab.gating) {
        return Error(item.Mark(),
                     absl::StrCat("rule for benchmark '", rule.benchmark, "' metric '", rule.metric,
                                  "' has no effect; give it a tolerance, a floor, max_noise, "
                                  "gating or an ab section"));
      }
      out->push_back(std::move(rule));
    }
    return absl::OkStatus();
  }

  absl::Status ParseSkus(const YAML::Node& node, std::vector<SkuPolicy>* out) const {
    if (!node.IsSequence()) {
      return Error(node.Mark(), absl::StrCat("skus must be a list of maps (lines starting with "
                                             "'- pattern: ...'), got ",
                                             TypeName(node)));
    }
    for (const auto& item : node) {
      SkuPolicy sku;
      sku.line = item.Mark().line + 1;
      PERFGATE_RETURN_IF_ERROR(CheckMap(item, "an SKU section", kSkuKeys));
      if (!item["pattern"]) {
        return Error(item.Mark(), "SKU section has no pattern; add e.g. pattern: \"h100-*\"");
      }
      for (const auto& entry : item) {
        const std::string& key = entry.first.Scalar();
        const YAML::Node& value = entry.second;
        absl::Status s;
        if (key == "pattern") {
          s = ParseGlob(value, key, &sku.pattern);
          if (s.ok()) s = CheckSkuPattern(value, sku.pattern);
        } else if (key == "tolerance") {
          s = ParseTolerance(value, &sku.tolerance);
        } else if (key == "gating") {
          s = ParseGating(value, &sku.gating);
        } else if (key == "max_noise") {
          s = ParsePercent(value, "max_noise", &sku.max_noise);
        } else if (key == "ab") {
          s = ParseAb(value, &sku.ab);
        } else if (key == "match") {
          sku.match.emplace();
          s = ParseMatch(value, &*sku.match);
        } else if (key == "rules") {
          s = ParseRules(value, absl::StrCat("SKU section '", item["pattern"].Scalar(), "'"),
                         &sku.rules);
        }
        PERFGATE_RETURN_IF_ERROR(s);
      }
      out->push_back(std::move(sku));
    }
    return absl::OkStatus();
  }

  // A typo in an SKU pattern would silently turn a section off; refuse a
  // pattern that names no SKU perfgate knows.
  absl::Status CheckSkuPattern(const YAML::Node& node, const std::string& pattern) const {
    for (const std::string& example : KnownSkuExamples()) {
      if (GlobMatch(pattern, example)) return absl::OkStatus();
      // The CPU examples are families ("cpu-amd-epyc"); real keys add the
      // model ("cpu-amd-epyc-7b13"), so a pattern for one model is accepted.
      if (example.starts_with("cpu-") &&
          (pattern.starts_with(example + "-") || GlobMatch(pattern, example + "-x"))) {
        return absl::OkStatus();
      }
    }
    return Error(node.Mark(),
                 absl::StrCat("SKU pattern '", pattern, "' matches no known SKU (known: ",
                              absl::StrJoin(KnownSkuExamples(), ", "),
                              "); check the spelling or use a glob like 'h100-*'"));
  }

  absl::StatusOr<Policy> Parse(const YAML::Node& root) const {
    Policy policy;
    // An empty file (or one with only comments) is the default policy.
    if (root.IsNull()) return policy;
    // An empty section ("rules:" with nothing under it) changes nothing.
    if (auto s = CheckMap(root, "the policy", kTopKeys, {"defaults", "rules", "skus"}); !s.ok()) {
      return s;
    }
    const YAML::Node version = root["version"];
    if (!version) {
      return Error(root.Mark(), absl::StrCat("missing 'version'; add 'version: ", kSupportedVersion,
                                             "' as the first line"));
    }
    int64_t v = 0;
    if (!version.IsScalar() || !absl::SimpleAtoi(version.Scalar(), &v) || v != kSupportedVersion) {
      const std::string got = version.IsScalar() ? absl::StrCat("'", version.Scalar(), "'")
                                                 : std::string(TypeName(version));
      return Error(version.Mark(),
                   absl::StrCat("unsupported policy version ", got,
                                "; this perfgate reads version ", kSupportedVersion));
    }
    policy.version = static_cast<int>(v);

    if (const YAML::Node defaults = root["defaults"]; defaults && !defaults.IsNull()) {
      PERFGATE_RETURN_IF_ERROR(CheckMap(defaults, "defaults", kDefaultsKeys));
      for (const auto& entry : defaults) {
        const std::string& key = entry.first.Scalar();
        const YAML::Node& value = entry.second;
        absl::Status s;
        if (key == "tolerance") {
          std::optional<double> tolerance;
          s = ParseTolerance(value, &tolerance);
          if (tolerance) policy.tolerance = *tolerance;
        } else if (key == "gating") {
          std::optional<bool> gating;
          s = ParseGating(value, &gating);
          if (gating) policy.gating = *gating;
        } else if (key == "history") {
          s = ParseHistory(value, &policy.history);
        } else if (key == "match") {
          s = ParseMatch(value, &policy.match);
        } else if (key == "max_noise") {
          s = ParsePercent(value, "max_noise", &policy.max_noise);
        } else if (key == "fdr") {
          s = ParseFdr(value, &policy.fdr);
        } else if (key == "inconclusive") {
          s = ParseInconclusive(value, &policy.inconclusive);
        } else if (key == "calibration_max_age") {
          s = ParseMaxAge(value, &policy.calibration_max_age);
        } else if (key == "ab") {
          s = ParseAb(value, &policy.ab);
        } else if (key == "count_tolerance" || key == "sim_tolerance") {
          std::optional<double> tolerance;
          s = ParsePercent(value, key, &tolerance);
          if (tolerance) (key == "count_tolerance" ? policy.count_tolerance : policy.sim_tolerance) = *tolerance;
        }
        PERFGATE_RETURN_IF_ERROR(s);
      }
    }
    if (const YAML::Node rules = root["rules"]; rules && !rules.IsNull()) {
      PERFGATE_RETURN_IF_ERROR(ParseRules(rules, "the top level", &policy.rules));
    }
    if (const YAML::Node skus = root["skus"]; skus && !skus.IsNull()) {
      PERFGATE_RETURN_IF_ERROR(ParseSkus(skus, &policy.skus));
    }
    return policy;
  }

 private:
  std::string file_name_;
};

bool RuleMatches(const PolicyRule& rule, const std::string& benchmark_key,
                 const std::string& metric) {
  return GlobMatch(rule.benchmark, benchmark_key) && GlobMatch(rule.metric, metric);
}

void ApplyAb(const AbOverrides& ab, Mode mode, ResolvedRule* out) {
  if (mode != Mode::kAb) return;
  if (ab.tolerance) out->tolerance = *ab.tolerance;
  if (ab.max_noise) out->max_noise = *ab.max_noise;
  if (ab.gating) out->gating = *ab.gating;
}

void Apply(const PolicyRule& rule, Mode mode, ResolvedRule* out) {
  if (rule.tolerance) out->tolerance = *rule.tolerance;
  if (rule.floor) out->floor = *rule.floor;
  if (rule.gating) out->gating = *rule.gating;
  if (rule.max_noise) out->max_noise = *rule.max_noise;
  ApplyAb(rule.ab, mode, out);
}

}  // namespace

const char* ToString(Mode m) { return m == Mode::kAb ? "ab" : "history"; }


ResolvedRule Policy::Resolve(const std::string& sku, const std::string& benchmark_key,
                             const std::string& metric, Mode mode) const {
  // Each level applies its own settings and then its A/B overrides, so an
  // A/B tolerance at the top level yields to a plain tolerance for one case.
  ResolvedRule out;
  out.tolerance = tolerance;
  out.gating = gating;
  out.max_noise = max_noise;
  ApplyAb(ab, mode, &out);
  for (const PolicyRule& rule : rules) {
    if (RuleMatches(rule, benchmark_key, metric)) Apply(rule, mode, &out);
  }
  for (const SkuPolicy& section : skus) {
    if (!GlobMatch(section.pattern, sku)) continue;
    if (section.tolerance) out.tolerance = *section.tolerance;
    if (section.gating) out.gating = *section.gating;
    if (section.max_noise) out.max_noise = *section.max_noise;
    ApplyAb(section.ab, mode, &out);
    for (const PolicyRule& rule : section.rules) {
      if (RuleMatches(rule, benchmark_key, metric)) Apply(rule, mode, &out);
    }
  }
  return out;
}

std::vector<std::string> Policy::MatchFields(const std::string& sku) const {
  // Like every other setting, the last matching SKU section that sets the
  // list replaces it; a section that wants the defaults too repeats them.
  std::vector<std::string> out = match;
  for (const SkuPolicy& section : skus) {
    if (section.match && GlobMatch(section.pattern, sku)) out = *section.match;
  }
  return out;
}

absl::StatusOr<Policy> ParsePolicy(const std::string& yaml_text, const std::string& file_name) {
  PolicyParser parser(file_name);
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::ParserException& e) {
    return parser.Error(e.mark, absl::StrCat("malformed YAML: ", e.msg));
  } catch (const YAML::Exception& e) {
    return parser.Error(e.mark, absl::StrCat("cannot read the policy: ", e.msg));
  }
  try {
    return parser.Parse(root);
  } catch (const YAML::Exception& e) {
    // Validation checks node types before it reads them, so this is a gap in
    // those checks; still name the line rather than fail the gate obscurely.
    return parser.Error(e.mark, absl::StrCat("cannot read the policy: ", e.msg));
  }
}

absl::StatusOr<PolicyFile> ReadPolicyFile(const std::string& path) {
  PolicyFile file;
  if (path.empty()) {
    file.text = "version: 1\n";
    return file;
  }
  auto text = ReadWholeFile(path);
  if (!text.ok()) return absl::NotFoundError(absl::StrCat("cannot read policy file '", path, "'"));
  file.text = *std::move(text);
  auto parsed = ParsePolicy(file.text, path);
  PERFGATE_RETURN_IF_ERROR(parsed);
  file.policy = *std::move(parsed);
  return file;
}

}  // namespace perfgate::gate
