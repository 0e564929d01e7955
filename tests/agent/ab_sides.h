// Scripted sides for the tests of the A/B engine: a case of one time
// metric, and sides whose samples come from a script.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/ab.h"

namespace perfgate::agent {

inline AbCase TimeCase(const std::string& name) {
  AbCase c;
  c.id.suite = "test";
  c.id.name = name;
  c.metrics.push_back({"time", "ms", Direction::kLowerIsBetter});
  return c;
}

// A side whose samples come from a script: the n-th call of Measure (0-based,
// counted per side) gets values from `value(key, call, i)`; every call is
// logged into a shared journal so tests can check the interleaving.
class ScriptedSide final : public Side {
 public:
  using Script = std::function<double(const std::string& key, unsigned call, unsigned i)>;
  ScriptedSide(AbRole role, Script script, std::vector<std::pair<AbRole, std::string>>* journal)
      : role_(role), script_(std::move(script)), journal_(journal) {}

  CaseResult Measure(const std::string& key, unsigned samples) override {
    journal_->emplace_back(role_, key);
    const unsigned call = calls_[key]++;
    CaseResult r;
    r.benchmark.suite = "test";
    r.benchmark.name = key.substr(5);
    r.metrics.push_back({"time", "ms", Direction::kLowerIsBetter});
    if (fail_on_call_ && call == *fail_on_call_) {
      r.status = CaseStatus::kFailed;
      r.reason = "verification failed";
      return r;
    }
    r.status = CaseStatus::kOk;
    // A device with an energy counter: the engine adds power after the declared metrics.
    const bool metered = power_calls_ > call;
    if (metered) r.metrics.push_back({"power", "W", Direction::kLowerIsBetter});
    for (unsigned i = 0; i < samples; ++i) {
      r.samples.push_back({i, {script_(key, call, i)}, false});
      if (metered) r.samples.back().values.push_back(600);
    }
    r.seconds = 0.002 * samples;  // the wall time a side reports: 2 ms a sample
    if (setup_s_ > 0) {  // a case with a set-up also reports its samples' own time
      r.seconds += setup_s_;
      r.sample_seconds = 0.002 * samples;
    }
    return r;
  }
  void FailOnCall(unsigned call) { fail_on_call_ = call; }
  /// The first `calls` calls also report the power the energy counter gave.
  void ReportPowerOnCalls(unsigned calls) { power_calls_ = calls; }
  /// Each call's case spends this long on set-up before its samples.
  void SetUpSeconds(double s) { setup_s_ = s; }

 private:
  AbRole role_;
  Script script_;
  std::vector<std::pair<AbRole, std::string>>* journal_;
  std::map<std::string, unsigned> calls_;
  std::optional<unsigned> fail_on_call_;
  double setup_s_ = 0;
  unsigned power_calls_ = 0;
};

// A level with a little deterministic spread, so that the tests have noise.
inline double Jitter(double level, unsigned call, unsigned i) {
  return level * (1.0 + 0.002 * std::sin(1.7 * (call * 31 + i)));
}

}  // namespace perfgate::agent
