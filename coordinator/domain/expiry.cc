#include "coordinator/domain/expiry.h"

#include <algorithm>
#include <chrono>
#include <iostream>

#include "common/status_macros.h"
#include "coordinator/domain/metrics.h"

namespace perfgate::coordinator {

RunExpiry::RunExpiry(Store& store, double max_silence_s)
    : store_(store),
      max_silence_s_(max_silence_s),
      periodic_(std::chrono::duration<double>(std::clamp(max_silence_s / 4, 0.2, 60.0)),
                Periodic::Start::kAfterOnePeriod, [this] { Check(); }) {}

void RunExpiry::Check() {
  // One replica of those sharing the database expires at a time.
  auto ran = store_.RunExclusively(PeriodicJob::kRunExpiry, [&]() -> absl::Status {
    auto expired = store_.ExpireSilentRuns(max_silence_s_);
    PERFGATE_RETURN_IF_ERROR(expired);
    for (const std::string& id : *expired) {
      DefaultMetrics().RunExpired();
      std::cout << "perfgate-coordinator: run " << id << " expired as failed (no word from its agent for "
                << max_silence_s_ << " s)" << std::endl;
    }
    return absl::OkStatus();
  });
  if (!ran.ok()) {
    std::cerr << "perfgate-coordinator: expiring silent runs: " << ran.status().message() << std::endl;
  }
}

}  // namespace perfgate::coordinator
