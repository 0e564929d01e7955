// What a CUDA case body sees of the case it runs. The bodies are compiled
// by nvcc as C++17 and cannot include suites/state.h; suites/cuda/state_host.h
// implements this over a State.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace perfgate::cuda {

/// A case body's view of its State. A body returns OK when it measured and
/// verified, UNAVAILABLE when the case cannot run here (it is skipped with
/// the message), and any other error when it failed.
class CaseHost {
 public:
  virtual ~CaseHost() = default;
  /// Bytes read plus written by one iteration (bandwidth metrics).
  virtual void SetBytesPerIteration(double bytes) = 0;
  /// Floating-point operations of one iteration (TFLOP/s metrics).
  virtual void SetFlopsPerIteration(double flops) = 0;
  /// The roof (GB/s) a roof-fraction metric divides the bandwidth by.
  virtual void SetRoof(double roof) = 0;
  /// The injected slowdown as a fraction of the measured time; 0 when none.
  virtual double inject_fraction() const = 0;
  /// Runs the engine's sampling loop: `warmup` untimed, then `sample`
  /// (seconds per iteration) until the stopping rule stops. The first error
  /// either returns ends the loop, discards that sample and is returned.
  virtual absl::Status Measure(const std::function<absl::Status()>& warmup,
                               const std::function<absl::StatusOr<double>()>& sample) = 0;
};

}  // namespace perfgate::cuda
