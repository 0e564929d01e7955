// The names of counted metrics (docs/statistics.md, "Counts"), shared by
// what produces them (measure/counts.h: callgrind's totals per iteration)
// and what judges them (gate/counts.h): a metric of one of these names is a
// count wherever it appears, in an A/B job, a stored run or a result file.
#pragma once

#include <string>
#include <string_view>

namespace perfgate {

/// "instructions" is what callgrind executed; the sim_* ones come from its
/// cache and branch-predictor simulation (--cache-sim, --branch-sim), named
/// apart from hardware counters, which count other things and are not
/// comparable with them.
inline constexpr char kInstructionsMetric[] = "instructions";
inline constexpr char kSimL1MissesMetric[] = "sim_l1_misses";
inline constexpr char kSimLlMissesMetric[] = "sim_ll_misses";
inline constexpr char kSimBranchMissesMetric[] = "sim_branch_mispredicts";
/// Counted metrics named with this prefix are simulated and judged against
/// the policy's sim_tolerance instead of its count_tolerance.
inline constexpr char kSimulatedPrefix[] = "sim_";
/// What Nsight Compute counts in a CUDA case's kernels (measure/ncu.h): warp
/// instructions executed and device-memory bytes, judged at count_tolerance,
/// and achieved occupancy, which moves a little with scheduling between
/// processes and is judged at sim_tolerance as the simulated counts are.
inline constexpr char kGpuInstructionsMetric[] = "gpu_instructions";
inline constexpr char kGpuDramBytesMetric[] = "gpu_dram_bytes";
inline constexpr char kGpuOccupancyMetric[] = "gpu_achieved_occupancy";
/// What the CPU's performance-monitoring unit counts (measure/perf_counters.h,
/// `--count hw`): instructions retired, judged at count_tolerance, and core
/// cycles and mispredicted branches, which move with caches, neighbours and
/// the predictor's history and are judged at sim_tolerance.
inline constexpr char kHwInstructionsMetric[] = "hw_instructions";
inline constexpr char kHwCyclesMetric[] = "hw_cycles";
inline constexpr char kHwBranchMissesMetric[] = "hw_branch_misses";

/// Whether `metric` is one of the counted metrics above.
inline bool IsCountMetric(std::string_view metric) {
  return metric == kInstructionsMetric || metric == kSimL1MissesMetric || metric == kSimLlMissesMetric ||
         metric == kSimBranchMissesMetric || metric == kGpuInstructionsMetric || metric == kGpuDramBytesMetric ||
         metric == kGpuOccupancyMetric || metric == kHwInstructionsMetric || metric == kHwCyclesMetric ||
         metric == kHwBranchMissesMetric;
}

/// Whether counted metric `metric` is judged at the policy's sim_tolerance
/// (a count that moves between processes) instead of its count_tolerance.
inline bool IsLooseCount(std::string_view metric) {
  return metric.substr(0, sizeof(kSimulatedPrefix) - 1) == kSimulatedPrefix || metric == kGpuOccupancyMetric ||
         metric == kHwCyclesMetric || metric == kHwBranchMissesMetric;
}

}  // namespace perfgate
