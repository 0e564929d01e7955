// A clock for unit tests that advances only when read (by its tick), slept
// on, or told to: a loop that waits on it becomes exact and instant.
#pragma once

#include <algorithm>

#include "measure/engine.h"

namespace perfgate::testing {

class FakeClock : public Clock {
 public:
  explicit FakeClock(double start = 0, double tick = 0) : now_(start), tick_(tick) {}
  double Now() override { return now_ += tick_; }
  void Sleep(double seconds) override {
    seconds = std::max(0.0, seconds);
    now_ += seconds;
    slept_ += seconds;
  }
  /// Time spent by the code under test (a case's body, a model's step).
  void Advance(double seconds) { now_ += seconds; }
  void set_tick(double seconds) { tick_ = seconds; }
  /// The time without reading it (a reading advances by the tick).
  double now() const { return now_; }
  double slept() const { return slept_; }

 private:
  double now_, tick_, slept_ = 0;
};

}  // namespace perfgate::testing
