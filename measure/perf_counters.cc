#include "measure/perf_counters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/count_metrics.h"
#include "common/file_io.h"

namespace perfgate {
namespace {

std::atomic<PerfCounters*> g_counting{nullptr};

int OpenEvent(const PerfEvent& event) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.size = sizeof(attr);
  attr.type = event.type;
  attr.config = event.config;
  attr.disabled = 1;
  attr.inherit = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

std::vector<PerfEvent> HardwareEvents() {
  return {{kHwInstructionsMetric, "instr/iter", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
          {kHwCyclesMetric, "cycles/iter", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
          {kHwBranchMissesMetric, "mispredicts/iter", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES}};
}

absl::StatusOr<std::unique_ptr<PerfCounters>> PerfCounters::Open(const std::vector<PerfEvent>& events) {
  std::unique_ptr<PerfCounters> counters(new PerfCounters());
  for (const PerfEvent& event : events) {
    const int fd = OpenEvent(event);
    if (fd < 0) {
      const int err = errno;  // before reading the paranoid level, which may set it again
      return absl::FailedPreconditionError(DescribePerfOpenError(event.metric, err, PerfEventParanoid()));
    }
    counters->fds_.push_back(fd);
    counters->events_.push_back(event);
  }
  return counters;
}

PerfCounters::~PerfCounters() {
  PerfCounters* self = this;
  g_counting.compare_exchange_strong(self, nullptr);
  for (int fd : fds_) close(fd);
}

// An inherited event's ioctl reaches the copies in the threads started since.
void PerfCounters::Enable() {
  for (int fd : fds_) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

void PerfCounters::Disable() {
  for (int fd : fds_) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

absl::StatusOr<std::vector<std::pair<MetricSpec, double>>> PerfCounters::PerIteration(double iterations) const {
  if (!(iterations > 0)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot count per iteration over ", iterations, " iterations"));
  }
  std::vector<std::pair<MetricSpec, double>> out;
  for (size_t i = 0; i < fds_.size(); ++i) {
    // value, time enabled, time running (read_format above); the reading of
    // an inherited event includes its threads', ended or running.
    uint64_t reading[3] = {0, 0, 0};
    if (read(fds_[i], reading, sizeof(reading)) != static_cast<ssize_t>(sizeof(reading))) {
      return absl::InternalError(absl::StrCat("cannot read the counter of ", events_[i].metric, ": ",
                                              std::strerror(errno)));
    }
    if (reading[1] == 0) {  // never enabled: nothing counted
      out.push_back({{events_[i].metric, events_[i].unit, Direction::kLowerIsBetter}, 0.0});
      continue;
    }
    if (reading[2] == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the counter of ", events_[i].metric,
          " never ran while enabled: the kernel gave its hardware counter to other events the whole time"));
    }
    const double scaled =
        static_cast<double>(reading[0]) * static_cast<double>(reading[1]) / static_cast<double>(reading[2]);
    out.push_back({{events_[i].metric, events_[i].unit, Direction::kLowerIsBetter}, scaled / iterations});
  }
  return out;
}

std::string DescribePerfOpenError(const std::string& event, int err, int paranoid) {
  const std::string why = absl::StrCat("perf_event_open: ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
      return absl::StrCat("this machine exposes no counter for ", event, " (", why,
                          "): a virtual machine usually hides the CPU's performance-monitoring unit; count under "
                          "callgrind instead (--count instructions)");
    case EACCES:
    case EPERM:
      return absl::StrCat(
          "counting ", event, " is not allowed here (", why, "): ",
          paranoid == -100 ? std::string("kernel.perf_event_paranoid could not be read")
                           : absl::StrCat("kernel.perf_event_paranoid is ", paranoid),
          "; a process's own user-space events need 2 or lower (sysctl kernel.perf_event_paranoid=2) or "
          "CAP_PERFMON, and a container's seccomp profile may refuse perf_event_open altogether");
    case ENOSYS:
      return absl::StrCat("this kernel has no performance events (", why, "), so ", event, " cannot be counted");
    default:
      return absl::StrCat("cannot open the counter of ", event, " (", why, ")");
  }
}

int PerfEventParanoid() {
  auto text = ReadWholeFile("/proc/sys/kernel/perf_event_paranoid");
  int level = 0;
  if (!text.ok() || !absl::SimpleAtoi(absl::StripAsciiWhitespace(*text), &level)) return -100;
  return level;
}

void SetCountingCounters(PerfCounters* counters) { g_counting.store(counters, std::memory_order_relaxed); }

void EnableCountingCounters() {
  if (PerfCounters* c = g_counting.load(std::memory_order_relaxed)) c->Enable();
}

void DisableCountingCounters() {
  if (PerfCounters* c = g_counting.load(std::memory_order_relaxed)) c->Disable();
}

}  // namespace perfgate
