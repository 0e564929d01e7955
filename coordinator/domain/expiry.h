// Expiry of the runs of vanished agents: a thread that, every so often,
// closes as failed every run left running with no word from its agent
// (OpenRun or a batch) for longer than the configured silence
// (perfgate-coordinator serve --expire-runs-after).
#pragma once

#include "common/periodic.h"
#include "coordinator/store.h"

namespace perfgate::coordinator {

class RunExpiry {
 public:
  /// Starts checking `store` every max_silence_s / 4 (from 0.2 s to 60 s).
  RunExpiry(Store& store, double max_silence_s);
  /// Destroying it stops the checks (waits for one under way).

 private:
  void Check();

  Store& store_;
  const double max_silence_s_;
  Periodic periodic_;  // last: it starts calling Check() once built
};

}  // namespace perfgate::coordinator
