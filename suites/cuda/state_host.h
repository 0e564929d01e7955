// CaseHost over a State: how the C++20 registration side hands a State to a
// CUDA case body compiled as C++17.
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "suites/cuda/case_host.h"
#include "suites/state.h"

namespace perfgate::cuda {

/// Forwards to a State; Measure() runs State::MeasureSamples.
class StateHost final : public CaseHost {
 public:
  explicit StateHost(suites::State& state) : state_(state) {}
  void SetBytesPerIteration(double bytes) override { state_.SetBytesPerIteration(bytes); }
  void SetFlopsPerIteration(double flops) override { state_.SetFlopsPerIteration(flops); }
  void SetRoof(double roof) override { state_.SetRoof(roof); }
  double inject_fraction() const override { return state_.inject_fraction(); }
  absl::Status Measure(const std::function<absl::Status()>& warmup,
                       const std::function<absl::StatusOr<double>()>& sample) override;

 private:
  suites::State& state_;
};

/// Ends a case with a body's status: OK leaves the State as the body left
/// it, UNAVAILABLE skips with the message, anything else fails with it.
void Conclude(suites::State& state, const absl::Status& status);

}  // namespace perfgate::cuda
