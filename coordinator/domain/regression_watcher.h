// Runs regression detection (regressions.h) off the ingest path: CloseRun
// hands the id of a closed run of a tracked branch to Enqueue, which returns
// at once; one background thread checks the runs in the order they closed.
// A failed check is logged and the next run goes on; the next run of the
// branch checks the same series again, so nothing is lost for good.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "coordinator/store.h"
#include "gate/policy.h"

namespace perfgate::coordinator {

class RegressionWatcher {
 public:
  /// Watches the branches in `tracked` (none: the watcher does nothing).
  RegressionWatcher(Store& store, gate::Policy policy, std::set<std::string> tracked);
  ~RegressionWatcher();  // finishes the run being checked, drops the rest

  /// Queues a run that closed complete (its branch is read in the background).
  void RunClosed(const std::string& run_id, RunStatus status);
  /// Runs checked since start (for tests and /metrics).
  uint64_t checked() const;
  /// Blocks until every queued run has been checked or `timeout` passes;
  /// true when the queue drained.
  bool WaitIdle(std::chrono::milliseconds timeout);

 private:
  void Loop();
  void Check(const std::string& run_id);

  Store& store_;
  const gate::Policy policy_;
  const std::set<std::string> tracked_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;  // guarded by mu_
  bool busy_ = false;              // guarded by mu_
  bool stop_ = false;              // guarded by mu_
  uint64_t checked_ = 0;           // guarded by mu_
  std::thread thread_;
};

}  // namespace perfgate::coordinator
