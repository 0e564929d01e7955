#include "common/periodic.h"

#include <utility>

namespace perfgate {

Periodic::Periodic(std::chrono::duration<double> period, Start start, std::function<void()> task)
    : period_(period), task_(std::move(task)), thread_([this, start] { Loop(start); }) {}

Periodic::~Periodic() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Periodic::Loop(Start start) {
  std::unique_lock<std::mutex> lock(mu_);
  if (start == Start::kAfterOnePeriod && cv_.wait_for(lock, period_, [this] { return stop_; })) return;
  while (!stop_) {
    lock.unlock();
    task_();
    lock.lock();
    cv_.wait_for(lock, period_, [this] { return stop_; });
  }
}

}  // namespace perfgate
