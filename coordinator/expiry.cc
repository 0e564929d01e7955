#include "coordinator/expiry.h"

#include <algorithm>
#include <chrono>
#include <iostream>

namespace perfgate::coordinator {

RunExpiry::RunExpiry(Store& store, double max_silence_s)
    : store_(store),
      max_silence_s_(max_silence_s),
      periodic_(std::chrono::duration<double>(std::clamp(max_silence_s / 4, 0.2, 60.0)),
                Periodic::Start::kAfterOnePeriod, [this] { Check(); }) {}

void RunExpiry::Check() {
  auto expired = store_.ExpireSilentRuns(max_silence_s_);
  if (!expired.ok()) {
    std::cerr << "perfgate-coordinator: expiring silent runs: " << expired.status().message() << std::endl;
    return;
  }
  for (const std::string& id : *expired) {
    std::cout << "perfgate-coordinator: run " << id << " expired as failed (no word from its agent for "
              << max_silence_s_ << " s)" << std::endl;
  }
}

}  // namespace perfgate::coordinator
