// Expiry of the runs of vanished agents: a thread that, every so often,
// closes as failed every run left running with no word from its agent
// (OpenRun or a batch) for longer than the configured silence
// (perfgate-coordinator serve --expire-runs-after).
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "coordinator/store.h"

namespace perfgate::coordinator {

class RunExpiry {
 public:
  /// Starts checking `store` every max_silence_s / 4 (from 0.2 s to 60 s).
  RunExpiry(Store& store, double max_silence_s);
  /// Stops the thread (waits for a check under way).
  ~RunExpiry();
  RunExpiry(const RunExpiry&) = delete;
  RunExpiry& operator=(const RunExpiry&) = delete;

 private:
  void Loop();

  Store& store_;
  const double max_silence_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace perfgate::coordinator
