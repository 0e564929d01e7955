// The host backend: each operation through Gloo's TCP transport, one rank per
// World (process, or thread in tests). Internal to the suite.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "suites/collectives/backend.h"
#include "suites/collectives/world.h"

namespace perfgate::suites::collectives {

/// Prepares `op` over the world's Gloo context with the buffers of `layout`.
/// Every rank must call it for the same case (it sets up pairs collectively).
absl::StatusOr<std::unique_ptr<Backend>> MakeGlooBackend(World& world, Op op, size_t bytes,
                                                          bool in_place, DType dtype,
                                                          const Layout& layout);

}  // namespace perfgate::suites::collectives
