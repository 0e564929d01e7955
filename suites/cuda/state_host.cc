#include "suites/cuda/state_host.h"

#include <string>

namespace perfgate::cuda {
namespace {

// Carries a body's error out of the engine's loop, which knows only doubles;
// caught in Measure() below, so it never leaves this file.
struct SampleAborted {};

}  // namespace

absl::Status StateHost::Measure(const std::function<absl::Status()>& warmup,
                                const std::function<absl::StatusOr<double>()>& sample) {
  absl::Status error;
  try {
    state_.MeasureSamples(
        [&] {
          error = warmup();
          if (!error.ok()) throw SampleAborted{};
        },
        [&] {
          absl::StatusOr<double> t = sample();
          if (!t.ok()) {
            error = t.status();
            throw SampleAborted{};
          }
          return *t;
        });
  } catch (const SampleAborted&) {
    return error;
  }
  return absl::OkStatus();
}

void Conclude(suites::State& state, const absl::Status& status) {
  if (status.ok()) return;
  if (status.code() == absl::StatusCode::kUnavailable) {
    state.Skip(std::string(status.message()));
  } else {
    state.Fail(std::string(status.message()));
  }
}

}  // namespace perfgate::cuda
