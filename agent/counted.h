// Counted A/B of a team's Google Benchmark program (docs/existing-benchmarks.md,
// "Counting instead of timing"): each side runs each case once as one process
// under Valgrind's callgrind, collecting only inside the benchmark functions
// (--toggle-collect, default BM_*), and the instructions of that region over
// the iterations the program reports are the case's count. Counts do not move
// with a neighbour, so one process a side decides (gate/counts.h).
//
// Why one process per case and one iteration: callgrind's totals are those of
// the whole process, and Google Benchmark calls a case's function several
// times while it grows the iteration count to its minimum time, reporting
// only the last call's iterations. A case filtered to itself
// (--benchmark_filter=^NAME$) with a minimum time it meets at once
// (--benchmark_min_time=1e-9) makes exactly one call of one iteration per
// repetition, so the count is exact: the instructions of one call of the
// benchmark function, its set-up inside the function included.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/ab.h"
#include "common/run_types.h"
#include "gate/policy.h"

namespace perfgate::agent {

/// What counts a case: Valgrind's callgrind (the host's instructions, and
/// with `simulate` its cache and branch simulation), Nsight Compute (a CUDA
/// case's kernels) or the CPU's hardware counters (measure/perf_counters.h).
enum class CountTool { kCallgrind, kNcu, kHardware };

/// The tool of `--count`'s value: "gpu" Nsight Compute, "hw" the hardware
/// counters, the others callgrind.
CountTool CountToolOf(const std::string& count);

/// Whether `tool` can count on this machine before anything is measured:
/// for the hardware counters, whether this process can open them (the
/// reason where not, measure/perf_counters.h); the other tools say so as
/// they run.
absl::Status CheckCountTool(CountTool tool);

/// How a side's program is counted.
struct CountOptions {
  std::string toggle = "BM_*";  // callgrind's --toggle-collect: the benchmark functions
  bool simulate = false;        // --cache-sim=yes --branch-sim=yes: the sim_* metrics as well
  unsigned processes = 1;       // counted processes per case and side
  double timeout_s = 600;       // one counted process is killed after this
  std::string work_dir;         // where result and callgrind files are written (and removed)
  std::string valgrind = "valgrind";
  /// Nsight Compute and the hardware counters count CountedAgent's cases only.
  CountTool tool = CountTool::kCallgrind;
  std::string ncu = "ncu";
};

/// The argument vector that counts case `name` of Google Benchmark command
/// `argv` (its {out} and {samples} placeholders replaced by `out` and 1):
/// valgrind with callgrind's options, its output files `callgrind_out`.%p,
/// then the command with the flags that make one call of one iteration of
/// that case alone and write its JSON to `out`.
std::vector<std::string> CountedArgv(const std::vector<std::string>& argv, const std::string& name,
                                     const std::string& out, const std::string& callgrind_out,
                                     const CountOptions& options);

/// `name` as a regular expression that matches exactly it.
std::string ExactFilter(const std::string& name);

/// One side of a counted A/B: its cases, each counted in one process.
class Counter {
 public:
  virtual ~Counter() = default;
  /// The side's cases by name, in its order; an error when it cannot say.
  virtual absl::StatusOr<std::vector<std::string>> ListCases() = 0;
  /// The identity of case `name` where no count gave it.
  virtual BenchmarkId IdOf(const std::string& name) const = 0;
  /// What counts, for messages.
  virtual std::string ToolName() const { return "callgrind"; }
  /// Case `name` counted in one process: a case result with one sample of
  /// the counted metrics per iteration (measure/counts.h). A program that
  /// exits non-zero or reports the case as failed gives a failed case with
  /// the reason; an error only when valgrind or the program cannot be run or
  /// callgrind wrote nothing readable.
  virtual absl::StatusOr<CaseResult> Count(const std::string& name) = 0;
};

/// A Google Benchmark program, run from an argument vector (never through
/// a shell).
class CountedProgram final : public Counter {
 public:
  CountedProgram(std::vector<std::string> argv, CountOptions options);
  /// --benchmark_list_tests; an error when it fails or lists none.
  absl::StatusOr<std::vector<std::string>> ListCases() override;
  BenchmarkId IdOf(const std::string& name) const override;
  absl::StatusOr<CaseResult> Count(const std::string& name) override;

 private:
  std::vector<std::string> argv_;
  CountOptions options_;
  unsigned runs_ = 0;
};

/// perfgate's own cases on a perfgate-agent build: `argv sample --case KEY
/// --samples N extra_args` under callgrind with collection off at start; the
/// engine's timed loop turns it on around each sample (measure/counts.h),
/// so the count is that of the samples alone, over N iterations. With
/// CountTool::kNcu, under ncu instead (`sample --counted-gpu`): the kernels
/// the samples launch, profiled from cuProfilerStart to cuProfilerStop. With
/// CountTool::kHardware, no tool (`sample --counted-hw`): the process counts
/// its own samples with the CPU's counters and prints them as its metrics.
/// A `--timeout` of extra_args (the timed run's per-case limit) is raised
/// to options.timeout_s, the counted process's own limit.
class CountedAgent final : public Counter {
 public:
  CountedAgent(std::vector<std::string> argv, std::vector<std::string> extra_args, std::vector<BenchmarkId> cases,
               unsigned samples, CountOptions options);
  /// The cases it was given, by key.
  absl::StatusOr<std::vector<std::string>> ListCases() override;
  BenchmarkId IdOf(const std::string& name) const override;
  std::string ToolName() const override;
  absl::StatusOr<CaseResult> Count(const std::string& name) override;

 private:
  std::vector<std::string> argv_;
  std::vector<std::string> extra_args_;
  std::vector<BenchmarkId> cases_;
  unsigned samples_;
  CountOptions options_;
  unsigned runs_ = 0;
};

/// The argument vector of valgrind's callgrind with `options`, its output
/// files `callgrind_out`.%p, collecting from the start or only where
/// toggled (by `toggle`, else by client requests).
std::vector<std::string> CallgrindArgv(const std::string& callgrind_out, const CountOptions& options,
                                       const std::string& toggle);

/// `result` with one sample: the counted metrics `counts`, per iteration.
CaseResult WithCountedMetrics(CaseResult result, const std::vector<std::pair<MetricSpec, double>>& counts);

/// The count of `timed` as a further part of its case: its samples numbered
/// after the timed ones, ending as the timed case did (the last part of a
/// case says how it ended, and a count never changes that).
CaseResult CountPart(const CaseResult& timed, CaseResult counted);

/// Counts every case the baseline lists (and any the candidate alone lists)
/// options.processes times on each side and judges the counts
/// (gate::JudgeCounts). Each pair holds one block per counted process.
/// A side that cannot be run ends counting with AbResult::error.
AbResult RunCountedAb(Counter& baseline, Counter& candidate, const gate::Policy& policy,
                      const std::string& sku, unsigned processes, std::ostream& log);

}  // namespace perfgate::agent
