// What the training and inference suites share about a case of the model:
// reading its backend, dtype and thread count, its registered points, why it
// cannot run here, the model it runs and how a status ends it. In the model
// library, so that the two suites depend on the model and not on each other.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/run_types.h"
#include "suites/transformer/transformer.h"
#include "suites/state.h"

namespace perfgate::suites::transformer {

/// A case's backend: host (fp32, OpenBLAS on `threads` threads) or cuda
/// (bf16 compute, fp32 master weights).
struct Backend {
  bool cuda = false;
  int threads = 1;  // host only
};

/// Reads the case's backend, dtype and (host) threads into *backend; fails
/// the case naming the parameter and returns false when one is wrong.
bool ReadBackend(State& state, Backend* backend);

/// The parameters of a registered point: backend, dtype, preset (and
/// threads=1 on the host: a per-core figure, as kernels/sgemm).
std::map<std::string, std::string> ModelPoint(const std::string& backend, const std::string& preset);

/// Why a model case cannot run here: "" on the host; for cuda, no visible
/// device or a build without CUDA, in the words of cuda::VisibleDevices.
std::string ModelCaseUnavailable(const BenchmarkId& id);

/// The model of a case: its preset with the case's batch and seq;
/// INVALID_ARGUMENT naming the parameter when the preset is unknown or the
/// result is not a model (Validate).
absl::StatusOr<Config> CaseConfig(const std::string& preset, int64_t batch, int64_t seq);

/// Ends a case with a status: UNAVAILABLE and FAILED_PRECONDITION (the
/// machine lacks a device, memory or NCCL) skip, any other error fails.
void Conclude(State& state, const absl::Status& status);

}  // namespace perfgate::suites::transformer
