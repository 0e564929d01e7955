// The engine's sampling loop over the ranks of a World. The stopping rule is
// per process; ranks that each applied it to their own times would stop
// after different sample counts and then wait on each other forever. So
// every sample is taken after a barrier, its time is the maximum over the
// ranks (the slowest rank bounds a collective or a data-parallel step, as
// nccl-tests reports it), every rank feeds that same value to its rule, and
// rank 0's verdict, broadcast, is the one all ranks follow (the per-case
// timeout reads each rank's own clock).
#pragma once

#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "measure/engine.h"
#include "suites/collectives/world.h"

namespace perfgate::suites::collectives {

/// Runs `warmup` (untimed; options.warmup_runs times, at least once, each
/// after a barrier), then samples until rank 0's rule stops: each `sample`
/// returns this rank's seconds per iteration. A sample is throttled when
/// `throttle` (may be null) marks it on any rank. `inject_fraction` > 0 adds
/// that fraction of each sample as real busy work (the gate's known
/// slowdown). Every rank must call it with the same options.
absl::StatusOr<Measurement> MeasureInLockstep(World& world, const EngineOptions& options,
                                              ThrottleSource* throttle, double inject_fraction,
                                              const std::function<absl::Status()>& warmup,
                                              const std::function<absl::StatusOr<double>()>& sample);

}  // namespace perfgate::suites::collectives
