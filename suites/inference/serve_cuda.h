// inference/serve on the CUDA backend: the device model as the server's
// ServeModel, and the check, before anything is timed, that its
// continuous-batching steps give the host backend's tokens. Built only with
// CUDA (PERFGATE_HAVE_CUDA).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "suites/inference/serving.h"
#include "suites/transformer/cuda_model.h"
#include "suites/transformer/transformer.h"

namespace perfgate::suites::inference {

/// The CUDA model as a ServeModel (CudaModel::StepSlots, its cache opened
/// with `slots`). A step that fails is kept as status() and every later step
/// returns token 0 without running, so that the run ends quickly; the case
/// then fails with that status.
class CudaServeModel : public ServeModel {
 public:
  /// A model created for inference with config.batch = slots (at least).
  static absl::StatusOr<std::unique_ptr<CudaServeModel>> Create(const transformer::Config& config,
                                                                const std::vector<float>& params, int slots);
  std::vector<int32_t> Step(const std::vector<transformer::SlotRun>& runs) override;
  /// OK while every step has run.
  const absl::Status& status() const { return status_; }

 private:
  explicit CudaServeModel(std::unique_ptr<transformer::cuda::CudaModel> model) : model_(std::move(model)) {}
  std::unique_ptr<transformer::cuda::CudaModel> model_;
  absl::Status status_;
};

/// Continuous-batching steps on the tiny preset, three slots, prompts of
/// different lengths admitted while others decode and a slot reused: each
/// step's tokens on the device equal the host backend's, except where the
/// host's two candidates were within 1e-2 of each other (bf16 may reorder
/// those); both models are fed the host's tokens, so one such pick does not
/// part the sequences. Run once per process; later calls return the result.
absl::Status VerifySlotsAgainstHost();

}  // namespace perfgate::suites::inference
