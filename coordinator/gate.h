// The gate engine: judges every metric of a candidate run against the
// summaries of its baseline runs under a policy. Pure domain code: no
// database, no wire. The statistical decision sits behind Decider so that
// stronger tests replace it without touching the rest.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "common/model.h"
#include "coordinator/policy.h"

namespace perfgate::coordinator {

/// What the gate decided about one metric.
enum class Verdict { kPass, kRegression, kImprovement, kBelowFloor, kMissing, kNoBaseline, kTooNoisy };

/// Lower-case name: "pass", "regression", "improvement", "below_floor", ...
const char* ToString(Verdict v);

/// Everything the decision of one metric may look at.
struct DecisionInput {
  std::string benchmark;  // key
  std::string metric;
  std::string unit;
  Direction direction = Direction::kLowerIsBetter;
  const MetricSummary* candidate = nullptr;     // null when missing
  std::vector<const MetricSummary*> baseline;  // one per baseline run having it, newest first
  ResolvedRule rule;
};

/// The decision about one metric.
struct MetricVerdict {
  std::string benchmark, metric, unit;
  Direction direction = Direction::kLowerIsBetter;
  double baseline_median = std::numeric_limits<double>::quiet_NaN();
  double candidate_median = std::numeric_limits<double>::quiet_NaN();
  double change = std::numeric_limits<double>::quiet_NaN();  // > 0 is worse
  double tolerance = 0;
  double floor = std::numeric_limits<double>::quiet_NaN();
  Verdict verdict = Verdict::kPass;
  bool gating = true;
  unsigned candidate_samples = 0;
  unsigned baseline_runs = 0;
  std::string note;
};

/// The statistical decision for one metric.
class Decider {
 public:
  virtual ~Decider() = default;
  /// Decides one metric; never throws.
  virtual MetricVerdict Decide(const DecisionInput& in) const = 0;
};

/// First decision: relative change of the candidate's median against the
/// median of the baseline runs' medians, compared with the tolerance; floors
/// checked on the candidate's median.
class MedianToleranceDecider final : public Decider {
 public:
  MetricVerdict Decide(const DecisionInput& in) const override;
};

/// The gate's overall result.
struct GateResult {
  std::vector<MetricVerdict> verdicts;  // worst first
  bool regression = false;              // a gating metric regressed, missed its floor or is missing
  std::string summary;                  // one sentence
};

/// Judges every metric present in the candidate or any baseline run.
GateResult EvaluateGate(const std::string& sku, const std::vector<MetricSummary>& candidate,
                        const std::vector<std::vector<MetricSummary>>& baseline_runs,
                        const Policy& policy, const Decider& decider);

}  // namespace perfgate::coordinator
