// inference/serve on the CUDA backend (serve_cuda.h).
#include "suites/inference/serve_cuda.h"

#include <cmath>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "suites/transformer/host_model.h"

namespace perfgate::suites::inference {
namespace {

using transformer::SlotRun;

// The check's steps, each a set of runs whose tokens are a prompt (start
// 0) or, for a decode ({-1}), the host's last pick in that slot: slots 0
// and 1 start, slot 2 joins while they decode, slot 1 finishes and is
// reused for a new prompt while 0 and 2 decode.
std::vector<std::vector<SlotRun>> Schedule(int vocab) {
  auto prompt = [&](int len, uint64_t seed) { return transformer::SyntheticTokens(len, vocab, seed); };
  const std::vector<int32_t> decode = {-1};  // the host's last pick in the slot
  return {{{0, 0, prompt(9, 21)}, {1, 0, prompt(4, 22)}},
          {{0, 9, decode}, {1, 4, decode}, {2, 0, prompt(6, 23)}},
          {{0, 10, decode}, {1, 5, decode}, {2, 6, decode}},
          {{0, 11, decode}, {1, 0, prompt(5, 24)}, {2, 7, decode}},
          {{0, 12, decode}, {1, 5, decode}, {2, 8, decode}}};
}

absl::Status RunCheck() {
  transformer::Config c = *transformer::Preset("tiny");
  c.batch = 3;
  const std::vector<float> params = transformer::InitParameters(c, 31);
  transformer::HostModel host(c, params);
  host.OpenSlots(c.batch);
  PERFGATE_ASSIGN_OR_RETURN(std::unique_ptr<transformer::cuda::CudaModel> gpu,
                            transformer::cuda::CudaModel::CreateForInference(c, params, 0));
  PERFGATE_RETURN_IF_ERROR(gpu->OpenSlots(c.batch));
  std::vector<int32_t> last(static_cast<size_t>(c.batch), 0);  // the host's last pick per slot
  int step_no = 0;
  for (std::vector<SlotRun>& runs : Schedule(c.vocab)) {
    ++step_no;
    for (SlotRun& r : runs) {
      if (r.tokens.size() == 1 && r.tokens[0] < 0) r.tokens[0] = last[r.slot];
    }
    const std::vector<float> logits = host.StepSlots(runs);
    PERFGATE_ASSIGN_OR_RETURN(std::vector<int32_t> got, gpu->StepSlots(runs));
    for (size_t i = 0; i < runs.size(); ++i) {
      const float* l = logits.data() + i * c.vocab;
      const int32_t want = transformer::Argmax(l, c.vocab);
      const bool near_tie = got[i] >= 0 && got[i] < c.vocab && std::fabs(l[want] - l[got[i]]) < 1e-2f;
      if (got[i] != want && !near_tie) {
        return absl::InternalError(absl::StrCat("continuous batching on the tiny preset: step ", step_no,
                                                ", slot ", runs[i].slot, " gave token ", got[i],
                                                " on the device, ", want, " on the host"));
      }
      last[runs[i].slot] = want;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<CudaServeModel>> CudaServeModel::Create(const transformer::Config& config,
                                                                        const std::vector<float>& params,
                                                                        int slots) {
  PERFGATE_ASSIGN_OR_RETURN(std::unique_ptr<transformer::cuda::CudaModel> model,
                            transformer::cuda::CudaModel::CreateForInference(config, params, 0));
  PERFGATE_RETURN_IF_ERROR(model->OpenSlots(slots));
  return std::unique_ptr<CudaServeModel>(new CudaServeModel(std::move(model)));
}

std::vector<int32_t> CudaServeModel::Step(const std::vector<transformer::SlotRun>& runs) {
  if (status_.ok()) {
    absl::StatusOr<std::vector<int32_t>> next = model_->StepSlots(runs);
    if (next.ok()) return *std::move(next);
    status_ = next.status();
  }
  return std::vector<int32_t>(runs.size(), 0);
}

absl::Status VerifySlotsAgainstHost() {
  static std::mutex mu;
  static std::optional<absl::Status> verified;
  std::lock_guard<std::mutex> lock(mu);
  if (!verified) verified = RunCheck();
  return *verified;
}

}  // namespace perfgate::suites::inference
