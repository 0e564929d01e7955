// The CUDA backend's public calls: checking their arguments and the call
// order, then enqueueing the passes of cuda_model_impl.cuh on the device.
#include <cuda_runtime.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "suites/cuda/check.h"
#include "suites/cuda/cublaslt.h"
#include "suites/cuda/visible_devices.h"
#include "suites/transformer/cuda_model.h"
#include "suites/transformer/cuda_model_impl.cuh"

namespace perfgate::suites::transformer::cuda {

CudaModel::CudaModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaModel::~CudaModel() = default;

absl::StatusOr<std::unique_ptr<CudaModel>> CudaModel::Create(const Config& config,
                                                             const std::vector<float>& params, int device) {
  return CreateImpl(config, params, device, false);
}

absl::StatusOr<std::unique_ptr<CudaModel>> CudaModel::CreateForInference(const Config& config,
                                                                         const std::vector<float>& params,
                                                                         int device) {
  return CreateImpl(config, params, device, true);
}

absl::StatusOr<std::unique_ptr<CudaModel>> CudaModel::CreateImpl(const Config& config,
                                                                 const std::vector<float>& params, int device,
                                                                 bool inference) {
  const std::string invalid = Validate(config);
  if (!invalid.empty()) return absl::InvalidArgumentError("invalid model configuration: " + invalid);
  const absl::StatusOr<int> devices = perfgate::cuda::VisibleDevices();
  if (!devices.ok()) return devices.status();
  if (device < 0 || device >= *devices) {
    return absl::UnavailableError(
        absl::StrCat("device ", device, " is not one of the ", *devices, " visible"));
  }
  // A machine without cuBLASLt cannot run the model: skip, not fail.
  auto lt = perfgate::cuda::LoadCublasLt();
  if (!lt.ok()) return absl::UnavailableError(lt.status().message());
  auto impl = std::make_unique<Impl>();
  impl->cfg = config;
  impl->layout = MakeLayout(config);
  impl->device = device;
  impl->inference = inference;
  impl->lt_ = *lt;
  if (params.size() != impl->layout.total) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", impl->layout.total, " parameters, got ", params.size()));
  }
  PERFGATE_RETURN_IF_ERROR(impl->Init(params));
  return std::unique_ptr<CudaModel>(new CudaModel(std::move(impl)));
}

const Config& CudaModel::config() const { return impl_->cfg; }

void* CudaModel::stream() const { return impl_->stream; }

absl::Status CudaModel::SetBatch(const int32_t* inputs, const int32_t* targets, int batch, int seq) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  if (batch <= 0 || batch > m.cfg.batch || seq <= 0 || seq > m.cfg.seq) {
    return absl::InvalidArgumentError(absl::StrCat("batch ", batch, " × seq ", seq, " exceeds the model's ",
                                                   m.cfg.batch, " × ", m.cfg.seq));
  }
  const size_t n = size_t(batch) * seq;
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i] < 0 || inputs[i] >= m.cfg.vocab || targets[i] < 0 || targets[i] >= m.cfg.vocab) {
      return absl::InvalidArgumentError(absl::StrCat("token ", i, " is outside the vocabulary"));
    }
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(m.inputs, inputs, n * sizeof(int32_t), cudaMemcpyHostToDevice, m.stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(m.targets, targets, n * sizeof(int32_t), cudaMemcpyHostToDevice, m.stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  m.batch = batch;
  m.seq = seq;
  m.forward_done = false;
  return m.PlanTraining();
}

absl::StatusOr<float> CudaModel::Forward() {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_RETURN_IF_ERROR(m.EnqueueForward());
  m.forward_done = true;
  float loss = 0;
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(&loss, m.loss, sizeof(float), cudaMemcpyDeviceToHost, m.stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  return loss;
}

absl::Status CudaModel::Backward(AllReducer* reducer) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  if (!m.forward_done) return absl::InternalError("Backward needs a Forward of the current batch first");
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  return m.EnqueueBackward(reducer);
}

absl::Status CudaModel::Step(const AdamW& hp) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  return m.EnqueueStep(hp);
}

absl::StatusOr<double> CudaModel::TimedTrainStep(const AdamW& hp, AllReducer* reducer) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsTraining());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_start, m.stream));
  PERFGATE_RETURN_IF_ERROR(m.EnqueueForward());
  m.forward_done = true;
  PERFGATE_RETURN_IF_ERROR(m.EnqueueBackward(reducer));
  PERFGATE_RETURN_IF_ERROR(m.EnqueueStep(hp));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_stop, m.stream));
  return m.Elapsed();
}

absl::StatusOr<std::vector<float>> CudaModel::DownloadParams() const {
  return impl_->Download(impl_->params);
}

absl::StatusOr<std::vector<float>> CudaModel::DownloadGrads() const {
  PERFGATE_RETURN_IF_ERROR(impl_->NeedsTraining());
  return impl_->Download(impl_->grads);
}

absl::Status CudaModel::Prefill(const int32_t* prompt, int batch, int prompt_len,
                                std::vector<float>* logits) {
  Impl& m = *impl_;
  if (batch <= 0 || batch > m.cfg.batch || prompt_len <= 0 || prompt_len > m.cfg.seq) {
    return absl::InvalidArgumentError(absl::StrCat("prompt of batch ", batch, " × ", prompt_len,
                                                   " exceeds the model's ", m.cfg.batch, " × ", m.cfg.seq));
  }
  const size_t n = size_t(batch) * prompt_len;
  for (size_t i = 0; i < n; ++i) {
    if (prompt[i] < 0 || prompt[i] >= m.cfg.vocab) {
      return absl::InvalidArgumentError(absl::StrCat("prompt token ", i, " is outside the vocabulary"));
    }
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(m.prompt, prompt, n * sizeof(int32_t), cudaMemcpyHostToDevice, m.stream));
  if (batch != m.pre_batch && m.graph != nullptr) {  // the graph is of one batch size
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGraphExecDestroy(m.graph));
    m.graph = nullptr;
  }
  m.pre_batch = batch;
  m.pre_len = prompt_len;
  PERFGATE_RETURN_IF_ERROR(m.PlanPrefill(batch, prompt_len));
  PERFGATE_RETURN_IF_ERROR(m.EnqueuePrefill());
  if (logits != nullptr) {
    logits->resize(size_t(batch) * m.cfg.vocab);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        logits->data(), m.dec_logits, logits->size() * sizeof(float), cudaMemcpyDeviceToHost, m.stream));
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  return absl::OkStatus();
}

absl::StatusOr<double> CudaModel::TimedPrefill() {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsPrefill("TimedPrefill"));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_start, m.stream));
  PERFGATE_RETURN_IF_ERROR(m.EnqueuePrefill());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_stop, m.stream));
  return m.Elapsed();
}

absl::StatusOr<std::vector<int32_t>> CudaModel::Greedy(int steps, bool use_graph) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsPrefill("Greedy"));
  if (steps < 1) return absl::InvalidArgumentError("Greedy needs at least one step");
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  // From the prompt: token 0 is the prefill's argmax, each later one the
  // argmax of a decode step fed the token before (HostModel::Greedy).
  PERFGATE_RETURN_IF_ERROR(m.EnqueueRewind());
  PERFGATE_RETURN_IF_ERROR(m.Decode(steps - 1, use_graph));
  std::vector<int32_t> log(size_t(m.pre_batch) * m.max_steps);
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(log.data(), m.dec_log, log.size() * sizeof(int32_t), cudaMemcpyDeviceToHost, m.stream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  std::vector<int32_t> tokens(size_t(m.pre_batch) * steps);
  for (int b = 0; b < m.pre_batch; ++b) {
    std::copy_n(log.begin() + size_t(b) * m.max_steps, steps, tokens.begin() + size_t(b) * steps);
  }
  return tokens;
}

absl::Status CudaModel::RewindToPrompt() {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsPrefill("RewindToPrompt"));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_RETURN_IF_ERROR(m.EnqueueRewind());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  return absl::OkStatus();
}

absl::StatusOr<double> CudaModel::TimedDecode(int steps) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.NeedsPrefill("TimedDecode"));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_RETURN_IF_ERROR(m.Capture());  // outside the timed region
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_start, m.stream));
  PERFGATE_RETURN_IF_ERROR(m.Decode(steps, true));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(m.ev_stop, m.stream));
  return m.Elapsed();
}

absl::Status CudaModel::OpenSlots(int slots) {
  Impl& m = *impl_;
  if (slots < 1 || slots > m.cfg.batch) {
    return absl::InvalidArgumentError(
        absl::StrCat("OpenSlots: ", slots, " slots, the model's cache holds 1 to ", m.cfg.batch));
  }
  m.open_slots = slots;
  m.pre_len = 0;  // the cache no longer holds a prompt
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int32_t>> CudaModel::StepSlots(const std::vector<SlotRun>& runs,
                                                          std::vector<float>* logits) {
  Impl& m = *impl_;
  if (m.open_slots == 0) return absl::InternalError("StepSlots needs OpenSlots first");
  if (const std::string problem = CheckSlotRuns(runs, m.open_slots, m.cfg.seq, m.cfg.vocab); !problem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("StepSlots: ", problem));
  }
  // Distinct slots of at most seq positions each: at most T rows.
  const SlotRows rows = FlattenSlotRuns(runs);
  const int R = static_cast<int>(rows.tokens.size()), n = static_cast<int>(runs.size());
  std::vector<int32_t> packed;
  packed.reserve(3 * size_t(R) + n);
  for (const std::vector<int32_t>* part : {&rows.tokens, &rows.slots, &rows.positions, &rows.last}) {
    packed.insert(packed.end(), part->begin(), part->end());
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(m.device));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(m.slot_rows, packed.data(), packed.size() * sizeof(int32_t),
                                                cudaMemcpyHostToDevice, m.stream));
  m.forward_done = false;  // the training activations are overwritten
  PERFGATE_RETURN_IF_ERROR(m.EnqueueSlotStep(R, n));
  std::vector<int32_t> next(runs.size());
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(next.data(), m.dec_next, next.size() * sizeof(int32_t), cudaMemcpyDeviceToHost, m.stream));
  if (logits != nullptr) {
    logits->resize(size_t(n) * m.cfg.vocab);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
        logits->data(), m.dec_logits, logits->size() * sizeof(float), cudaMemcpyDeviceToHost, m.stream));
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(m.stream));
  return next;
}

}  // namespace perfgate::suites::transformer::cuda
