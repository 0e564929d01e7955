// A task run on a thread of its own every so often until its owner is
// destroyed: the coordinator's partition keeper and run expiry.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace perfgate {

class Periodic {
 public:
  enum class Start { kNow, kAfterOnePeriod };
  /// Calls `task` every `period` (first at once with Start::kNow, else after
  /// one period) on a thread of its own.
  Periodic(std::chrono::duration<double> period, Start start, std::function<void()> task);
  /// Stops the thread; waits for a call under way.
  ~Periodic();
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

 private:
  void Loop(Start start);

  const std::chrono::duration<double> period_;
  const std::function<void()> task_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace perfgate
