// Counted metrics of CUDA cases (docs/statistics.md, "Counts on the GPU"):
// what Nsight Compute's command line (ncu) counts in the kernels a counted
// process launches inside the engine's timed loop, read from its CSV. The
// loop opens the profiler's range around each sample (cuProfilerStart and
// cuProfilerStop, from the driver through dlopen) once EnableGpuCountingRange
// was called, so `ncu --profile-from-start off` profiles the samples alone,
// as callgrind's client requests count them on the host. ncu replays each
// kernel to collect its counters and leaves the clocks alone
// (--clock-control none), so a count does not move with a neighbour or a
// clock: one process a side decides.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/count_metrics.h"
#include "common/run_types.h"

namespace perfgate {

/// The ncu metrics behind the GPU counted metrics: warp instructions
/// executed, bytes moved to and from device memory, and achieved occupancy
/// (the active warps' share of the most an SM can hold, while it was active).
inline constexpr char kNcuInstructions[] = "smsp__inst_executed.sum";
inline constexpr char kNcuDramBytes[] = "dram__bytes.sum";
inline constexpr char kNcuOccupancy[] = "sm__warps_active.avg.pct_of_peak_sustained_active";

/// One kernel launch ncu profiled: its name and each metric's value (units
/// as ncu printed them: base units with --print-units base).
struct NcuLaunch {
  std::string kernel;
  std::map<std::string, double> values;
};

/// Parses ncu's CSV (--csv), in either layout: --page raw (a header row of
/// the launch's columns and one column per metric, a row of units, one row
/// per launch) or --page details (one row per launch and metric: "Metric
/// Name", "Metric Value"). Lines before the header (the program's output,
/// ==PROF== lines) are skipped; numbers may carry thousands separators
/// ("53,261,312"); a value ncu gives as "n/a" is left out. `name` starts
/// every error. An "==ERROR==" line is the error (ERR_NVGPUCTRPERM: the node
/// does not let this user read GPU counters, with what would); no header is
/// an error, unless ncu said it profiled no kernel (an empty list).
absl::StatusOr<std::vector<NcuLaunch>> ParseNcuCsv(const std::string& text, const std::string& name);

/// The GPU counted metrics per iteration over `launches` (the kernels of
/// `iterations` > 0 samples): gpu_instructions and gpu_dram_bytes summed
/// over the launches, gpu_achieved_occupancy their mean weighted by
/// instructions; each where every launch gave its ncu metric. An error when
/// there is no launch (the region launched no kernel: a copy is none) or
/// no launch gave instructions.
absl::StatusOr<std::vector<std::pair<MetricSpec, double>>> GpuCountsPerIteration(
    const std::vector<NcuLaunch>& launches, double iterations);

/// The argument vector of ncu (`ncu` the command) that profiles the counted
/// region of the program appended after it: the three metrics, profiling
/// from cuProfilerStart only, clocks left alone, child processes followed,
/// CSV of the raw page in base units written to `log_file`.
std::vector<std::string> NcuArgv(const std::string& ncu, const std::string& log_file);

/// From now on StartCounting and StopCounting (measure/counts.h) also start
/// and stop the CUDA profiler's range. False, changing nothing, when the
/// driver (libcuda.so.1) or its profiler entry points cannot be loaded.
bool EnableGpuCountingRange();
/// What StartCounting and StopCounting call: the profiler's range, once
/// enabled; nothing otherwise.
void StartGpuCountingRange();
void StopGpuCountingRange();

/// Whether this node lets a process read GPU performance counters, from the
/// driver's parameters (/proc/driver/nvidia/params, RmProfilingAdminOnly):
/// "allowed", "admin only (RmProfilingAdminOnly: 1)", "unknown (...)" when
/// the file does not say, or "no NVIDIA driver" where it is absent (as under
/// gVisor). `params_path` is for tests.
std::string GpuCountersAccess(const std::string& params_path = "/proc/driver/nvidia/params");

}  // namespace perfgate
