// The collectives suite: all_reduce, all_gather, reduce_scatter, broadcast,
// alltoall and sendrecv, timed and counted as nccl-tests does (algbw = S / t,
// busbw = algbw x the operation's bus factor), every result checked exactly.
// Backends: Gloo over TCP on the host (what CI runs) and NCCL on GPUs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "suites/collectives/ops.h"
#include "suites/collectives/world.h"
#include "suites/registry.h"

namespace perfgate::suites::collectives {

/// The host sweep registered by default: 8 B to 4 MiB by factor 2, small
/// enough for CI on two cores. Larger sweeps come from --set bytes=MIN..MAX.
inline constexpr uint64_t kDefaultMinBytes = 8;
inline constexpr uint64_t kDefaultMaxBytes = 4u << 20;

/// Sizes from min to max (inclusive) multiplying by factor, as decimal strings;
/// empty when min is 0, min > max or factor < 2.
std::vector<std::string> GeometricSizes(uint64_t min, uint64_t max, uint64_t factor);

/// Registers collectives/<op> for every operation, with axes backend (gloo;
/// nccl by --set), bytes, inplace (0 and 1 where the operation has an
/// in-place form) and dtype (float32; int32 by --set). The bodies run in
/// ProcessWorld().
void Register(Registry& registry);

/// Runs one case of `op` as rank world.rank() of world.size(): the body the
/// registry calls, exposed so tests can run ranks in threads, each with its
/// own World.
void RunCase(State& state, World& world, Op op);

}  // namespace perfgate::suites::collectives
