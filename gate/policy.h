// The gate policy: a YAML file versioned in the tested repository that sets,
// per SKU pattern and per benchmark/metric pattern, the tolerated regression,
// absolute floors, whether a metric gates, and which environment fields must
// match for two runs to be compared.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace perfgate::gate {

/// How a gate gets its baseline: the last K comparable runs of the baseline
/// branch, or a baseline side measured interleaved in the same job.
enum class Mode { kHistory, kAb };
/// "history" or "ab".
const char* ToString(Mode m);

/// What a gate does with a gating metric it cannot judge (too noisy, no
/// baseline, invalid environment): report it with exit 3, fail, or pass.
enum class InconclusiveAction { kReport, kFail, kPass };

/// Settings that A/B gates use instead of the ones around them: one job on
/// one node removes node-to-node variance, so a tighter tolerance can hold.
struct AbOverrides {
  std::optional<double> tolerance;
  std::optional<double> max_noise;
  std::optional<bool> gating;
};

/// A benchmark/metric rule inside a SKU section (or at top level).
struct PolicyRule {
  std::string benchmark = "*";  // glob over BenchmarkId::Key()
  std::string metric = "*";     // glob over the metric name
  std::optional<double> tolerance;  // fraction, 0.05 = 5 %
  std::optional<double> floor;      // absolute, in the metric's unit
  std::optional<bool> gating;
  std::optional<double> max_noise;  // candidate noise (stdev/mean) above this is too noisy
  AbOverrides ab;
  int line = 0;  // 1-based line in the policy file, for messages
};

/// Settings that apply to the SKUs a pattern matches.
struct SkuPolicy {
  std::string pattern;  // glob over SKU keys, e.g. "h100-*"
  std::optional<double> tolerance;
  std::optional<bool> gating;
  std::optional<double> max_noise;
  AbOverrides ab;
  std::optional<std::vector<std::string>> match;
  std::vector<PolicyRule> rules;
  int line = 0;
};

/// What applies to one metric of one case on one SKU.
struct ResolvedRule {
  double tolerance = 0.03;
  std::optional<double> floor;
  bool gating = true;
  std::optional<double> max_noise;
};

/// A parsed, validated policy. Later, more specific entries win: top-level
/// defaults, then rules at top level, then each matching SKU section in file
/// order (its own settings, then its rules in order).
struct Policy {
  int version = 1;
  double tolerance = 0.03;  // default tolerated regression
  bool gating = true;
  unsigned history = 5;     // K: baseline runs to compare against
  std::vector<std::string> match;  // environment fields that must be equal
  std::optional<double> max_noise;
  double fdr = 0.01;        // Benjamini–Hochberg q over the metrics of one gate (docs/statistics.md)
  /// Two-sided level of every change's interval. Not a setting of the
  /// policy file: the A/B stop rule judges its early looks at a stricter
  /// level, so that looking after every round cannot pass a regression
  /// (docs/statistics.md, "The pass contract").
  double confidence = 0.95;
  /// Tolerated growth of a counted metric (instructions per iteration):
  /// from measured A/A of counts (docs/statistics.md, "Counts").
  double count_tolerance = 0.005;
  /// Tolerated growth of a simulated count (sim_* metrics: cache and branch
  /// misses), whose A/A moves by several per cent (docs/statistics.md).
  double sim_tolerance = 0.10;
  InconclusiveAction inconclusive = InconclusiveAction::kReport;
  /// A node's calibration older than this is stale and never used (docs/calibration.md).
  std::chrono::seconds calibration_max_age{30 * 24 * 3600};
  AbOverrides ab;
  std::vector<PolicyRule> rules;
  std::vector<SkuPolicy> skus;

  /// The settings for metric `metric` of case `benchmark_key` on `sku`.
  ResolvedRule Resolve(const std::string& sku, const std::string& benchmark_key,
                       const std::string& metric, Mode mode = Mode::kHistory) const;
  /// Environment fields that must match on `sku`.
  std::vector<std::string> MatchFields(const std::string& sku) const;
};

/// Parses and validates a policy. Errors are INVALID_ARGUMENT with
/// "<file_name>:<line>: <reason>", e.g. "perfgate.yaml:7: unknown key
/// 'tolerence' (expected one of: ...)".
absl::StatusOr<Policy> ParsePolicy(const std::string& yaml_text, const std::string& file_name);

/// A policy file as read: its text (what a coordinator is sent) and the
/// policy it parses to.
struct PolicyFile {
  std::string text;
  Policy policy;
};

/// Reads and validates the policy file at `path`; an empty path is the
/// default policy (text "version: 1\n"). NOT_FOUND "cannot read policy file
/// '<path>'" when it cannot be read, else ParsePolicy's errors.
absl::StatusOr<PolicyFile> ReadPolicyFile(const std::string& path);

}  // namespace perfgate::gate
