// The inference suite: the model of suites/transformer serving requests.
// inference/prefill runs a prompt of P tokens at batch B through the model
// and fills the KV cache (time to first token); inference/decode generates
// tokens one step at a time from that cache, greedy, at batch 1, 8 and 64
// (time per output token and tokens/s). On the GPU the decode step is
// captured once as a CUDA graph and replayed, as serving engines do: at
// batch 1 decode is bound by kernel launches otherwise.
#pragma once

#include "suites/registry.h"

namespace perfgate::suites::inference {

/// Registers inference/prefill and inference/decode.
void Register(Registry& registry);

}  // namespace perfgate::suites::inference
