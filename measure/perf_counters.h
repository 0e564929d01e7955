// Hardware counters through perf_event_open(2) (docs/statistics.md,
// "Hardware counters"): what the CPU's performance-monitoring unit counts in
// the measured region of this process and of the threads it starts, user
// space only. They are named apart from callgrind's counts (hw_*): the CPU
// counts instructions it retired, callgrind those it translated, and the
// two differ by the instructions' definition, by string operations and by
// what the kernel does on the process's behalf.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "common/run_types.h"

namespace perfgate {

/// One event to count: perf's type and config (linux/perf_event.h) and the
/// metric it becomes per iteration, lower is better.
struct PerfEvent {
  std::string metric;
  std::string unit;
  uint32_t type = 0;
  uint64_t config = 0;
};

/// The hardware events of `--count hw`: instructions retired
/// (hw_instructions), core cycles (hw_cycles) and mispredicted branches
/// (hw_branch_misses).
std::vector<PerfEvent> HardwareEvents();

/// Counters of one process, opened disabled, that also count every thread
/// the process starts after opening them (perf's `inherit`); kernel and
/// hypervisor time left out, so that kernel.perf_event_paranoid 2, Debian's
/// default, allows them.
class PerfCounters {
 public:
  /// Opens `events`; an error naming the first that cannot be opened, and
  /// why (DescribePerfOpenError), with nothing left open.
  static absl::StatusOr<std::unique_ptr<PerfCounters>> Open(const std::vector<PerfEvent>& events);
  ~PerfCounters();
  PerfCounters(const PerfCounters&) = delete;
  PerfCounters& operator=(const PerfCounters&) = delete;

  void Enable();
  void Disable();
  /// Each event's count while enabled, over `iterations` (> 0). Where the
  /// kernel shared a counter between events (multiplexing), the count is
  /// scaled by the time it was enabled over the time it ran. An error when
  /// an event never ran or `iterations` is not positive.
  absl::StatusOr<std::vector<std::pair<MetricSpec, double>>> PerIteration(double iterations) const;

 private:
  PerfCounters() = default;
  std::vector<PerfEvent> events_;
  std::vector<int> fds_;
};

/// What perf_event_open's errno `err` means for `event` on a kernel whose
/// kernel.perf_event_paranoid is `paranoid` (-100 where it is unknown): no
/// such counter here (most VMs expose no performance-monitoring unit), the
/// paranoid level or a seccomp policy forbidding it, or no perf events in
/// the kernel.
std::string DescribePerfOpenError(const std::string& event, int err, int paranoid);

/// kernel.perf_event_paranoid from /proc, or -100 where it cannot be read.
int PerfEventParanoid();

/// From now on StartCounting and StopCounting (measure/counts.h) also
/// enable and disable `counters`; nullptr stops that. `counters` must
/// outlive the counting.
void SetCountingCounters(PerfCounters* counters);
/// What StartCounting and StopCounting call.
void EnableCountingCounters();
void DisableCountingCounters();

}  // namespace perfgate
