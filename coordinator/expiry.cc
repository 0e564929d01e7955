#include "coordinator/expiry.h"

#include <algorithm>
#include <chrono>
#include <iostream>

namespace perfgate::coordinator {

RunExpiry::RunExpiry(Store& store, double max_silence_s)
    : store_(store), max_silence_s_(max_silence_s), thread_([this] { Loop(); }) {}

RunExpiry::~RunExpiry() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RunExpiry::Loop() {
  const auto period = std::chrono::duration<double>(std::clamp(max_silence_s_ / 4, 0.2, 60.0));
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
    lock.unlock();
    auto expired = store_.ExpireSilentRuns(max_silence_s_);
    if (!expired.ok()) {
      std::cerr << "perfgate-coordinator: expiring silent runs: " << expired.status().message() << std::endl;
    } else {
      for (const std::string& id : *expired) {
        std::cout << "perfgate-coordinator: run " << id << " expired as failed (no word from its agent for "
                  << max_silence_s_ << " s)" << std::endl;
      }
    }
    lock.lock();
  }
}

}  // namespace perfgate::coordinator
