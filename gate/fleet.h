// Fleet outliers (docs/statistics.md): among the nodes of one SKU in one sweep,
// the nodes whose median of a metric lies beyond k × MAD of the fleet's median,
// with the environment fields in which each differs from the majority. Pure
// domain code: the coordinator feeds it stored runs, tests feed it by hand.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/run_types.h"

namespace perfgate::gate {

/// Default threshold in MADs.
inline constexpr double kDefaultFleetK = 5.0;
/// The MAD is never taken below this fraction of |fleet median|: a fleet that
/// agrees exactly (MAD 0) would otherwise make any difference infinitely many
/// MADs. With k = 5 a node must then differ by more than 0.5 %.
inline constexpr double kFleetMadFloor = 1e-3;
/// A metric is compared only across at least this many nodes.
inline constexpr uint32_t kMinFleetNodes = 3;

/// One run of the sweep: where it ran, its environment fields and summaries.
struct FleetRun {
  std::string run_id;
  std::string node;
  TimePoint finished_at{};  // of several runs of one node, the newest is used
  std::map<std::string, std::string> fields;
  std::vector<MetricSummary> summaries;
};

/// What to compare and how strictly.
struct FleetOptions {
  double k = kDefaultFleetK;       // threshold in MADs; must be > 0
  std::string benchmark_glob;      // only benchmark keys matching it, when set
  std::string metric;              // only this metric, when set
};

/// An environment field whose value on a node is not the fleet's majority value.
struct FieldDifference {
  std::string name;
  std::string node_value;      // empty when the node lacks the field
  std::string majority_value;  // empty when the majority lacks it
  bool operator==(const FieldDifference&) const = default;
};

/// Which side of the fleet an outlier is on, for the metric's direction.
enum class FleetSide { kWorse, kBetter };

/// One node beyond k × MAD in one metric.
struct FleetOutlier {
  std::string node, run_id, benchmark, metric, unit;
  Direction direction = Direction::kLowerIsBetter;
  double node_median = 0, fleet_median = 0;
  double mad = 0;        // the MAD the deviation is measured in (after the floor)
  double deviation = 0;  // (node − fleet median) / mad; > 0 is worse
  FleetSide side = FleetSide::kWorse;
  uint32_t nodes = 0;    // nodes compared in this metric
  std::vector<FieldDifference> differing_fields;  // ordered by name
};

/// How many metrics a node is an outlier in.
struct FleetNode {
  std::string node, run_id;
  uint32_t worse = 0, better = 0;
};

/// The outcome of a fleet comparison.
struct FleetReport {
  uint32_t nodes = 0;                  // distinct nodes in the sweep
  double k = kDefaultFleetK;           // the threshold applied, in MADs
  std::vector<FleetOutlier> outliers;  // by benchmark, metric, then deviation descending
  std::vector<FleetNode> node_summary; // every node: most worse outliers first, then by name
  /// True when some node is an outlier on the worse side.
  bool AnyWorse() const;
};

/// Compares the nodes of runs (one SKU, one sweep) metric by metric. A metric
/// is compared when at least kMinFleetNodes nodes have a finite median for it;
/// a fleet whose median and MAD are both 0 in a metric yields no outlier there.
FleetReport FindFleetOutliers(const std::vector<FleetRun>& runs, const FleetOptions& options = {});

/// "worse" or "better".
const char* ToString(FleetSide side);

}  // namespace perfgate::gate
