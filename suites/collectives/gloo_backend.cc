#include "suites/collectives/gloo_backend.h"

#include <chrono>
#include <cstring>
#include <exception>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "gloo/allgather.h"
#include "gloo/allreduce.h"
#include "gloo/alltoall.h"
#include "gloo/broadcast.h"
#include "gloo/context.h"
#include "gloo/math.h"
#include "gloo/reduce_scatter.h"
#include "gloo/transport/unbound_buffer.h"

namespace perfgate::suites::collectives {
namespace {

// The pair slot of sendrecv's point-to-point messages; far above the slots
// Gloo's collectives derive from their tags.
constexpr uint64_t kSendRecvSlot = uint64_t{1} << 40;

template <typename T>
class GlooBackend final : public Backend {
 public:
  GlooBackend(std::shared_ptr<gloo::Context> ctx, Op op, size_t bytes, bool in_place,
              const Layout& layout)
      : ctx_(std::move(ctx)),
        op_(op),
        bytes_(bytes),
        in_place_(in_place),
        layout_(layout),
        send_(layout.send_count),
        recv_(layout.recv_count) {
    const int n = ctx_->size;
    if (op_ == Op::kReduceScatter) {
      // Gloo's reduce-scatter (recursive halving-doubling) reduces in place
      // and leaves this rank's block at the start of the buffer.
      std::vector<T*> ptrs{send_.data()};
      scatter_ = std::make_unique<gloo::ReduceScatterHalvingDoubling<T>>(
          ctx_, ptrs, static_cast<int>(layout_.send_count),
          std::vector<int>(n, static_cast<int>(layout_.chunk)));
    }
    if (op_ == Op::kSendRecv) {
      send_buf_ = ctx_->createUnboundBuffer(send_.data(), send_.size() * sizeof(T));
      recv_buf_ = ctx_->createUnboundBuffer(recv_.data(), recv_.size() * sizeof(T));
    }
  }

  int ranks() const override { return ctx_->size; }

  absl::Status Fill() override {
    const int rank = ctx_->rank;
    for (size_t k = 0; k < send_.size(); ++k) send_[k] = static_cast<T>(InputValue(rank, k));
    std::fill(recv_.begin(), recv_.end(), T{0});
    if (in_place_) {
      // nccl-tests' in-place forms: the input already sits in the output.
      const size_t offset = op_ == Op::kAllGather ? static_cast<size_t>(rank) * layout_.chunk : 0;
      const size_t count = op_ == Op::kAllGather ? layout_.chunk : recv_.size();
      if (op_ != Op::kReduceScatter) {
        for (size_t k = 0; k < count; ++k) recv_[offset + k] = static_cast<T>(InputValue(rank, k));
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<double> Time(int iters) override {
    try {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < iters; ++i) RunOnce();
      const auto t1 = std::chrono::steady_clock::now();
      return std::chrono::duration<double>(t1 - t0).count();
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat(OpName(op_), " over Gloo: ", e.what()));
    }
  }

  absl::StatusOr<std::string> Check(int corrupt_rank) override {
    const int rank = ctx_->rank;
    const T* result = op_ == Op::kReduceScatter && in_place_ ? send_.data() : recv_.data();
    const size_t count = ResultCount(op_, layout_);
    if (rank == corrupt_rank && count > 0) {
      const_cast<T*>(result)[count / 2] += T{1};
    }
    for (size_t i = 0; i < count; ++i) {
      const int32_t want = ExpectedValue(op_, ctx_->size, rank, i, layout_);
      if (result[i] != static_cast<T>(want)) {
        return Mismatch(op_, bytes_, rank, i, static_cast<double>(result[i]), want);
      }
    }
    return std::string();
  }

 private:
  void RunOnce() {
    const int n = ctx_->size;
    const int rank = ctx_->rank;
    switch (op_) {
      case Op::kAllReduce: {
        gloo::AllreduceOptions o(ctx_);
        if (!in_place_) o.setInput(send_.data(), send_.size());
        o.setOutput(recv_.data(), recv_.size());
        void (*fn)(void*, const void*, const void*, size_t) = &gloo::sum<T>;
        o.setReduceFunction(fn);
        gloo::allreduce(o);
        break;
      }
      case Op::kAllGather: {
        gloo::AllgatherOptions o(ctx_);
        if (!in_place_) o.setInput(send_.data(), send_.size());
        o.setOutput(recv_.data(), recv_.size());
        gloo::allgather(o);
        break;
      }
      case Op::kReduceScatter:
        scatter_->run();
        if (!in_place_) std::memcpy(recv_.data(), send_.data(), layout_.chunk * sizeof(T));
        break;
      case Op::kBroadcast: {
        gloo::BroadcastOptions o(ctx_);
        if (!in_place_ && rank == 0) o.setInput(send_.data(), send_.size());
        o.setOutput(recv_.data(), recv_.size());
        o.setRoot(0);
        gloo::broadcast(o);
        break;
      }
      case Op::kAllToAll: {
        gloo::AlltoallOptions o(ctx_);
        o.setInput(send_.data(), send_.size());
        o.setOutput(recv_.data(), recv_.size());
        gloo::alltoall(o);
        break;
      }
      case Op::kSendRecv:
        send_buf_->send((rank + 1) % n, kSendRecvSlot);
        recv_buf_->recv((rank - 1 + n) % n, kSendRecvSlot);
        send_buf_->waitSend();
        recv_buf_->waitRecv();
        break;
    }
  }

  std::shared_ptr<gloo::Context> ctx_;
  Op op_;
  size_t bytes_;
  bool in_place_;
  Layout layout_;
  std::vector<T> send_, recv_;
  std::unique_ptr<gloo::ReduceScatterHalvingDoubling<T>> scatter_;
  std::unique_ptr<gloo::transport::UnboundBuffer> send_buf_, recv_buf_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> MakeGlooBackend(World& world, Op op, size_t bytes,
                                                          bool in_place, DType dtype,
                                                          const Layout& layout) {
  if (layout.send_count > static_cast<size_t>(std::numeric_limits<int>::max())) {
    // Gloo's reduce-scatter counts elements in an int.
    return absl::InvalidArgumentError(absl::StrCat(bytes, " B is beyond what Gloo's ", OpName(op),
                                                   " can address; use a smaller size"));
  }
  auto ctx = world.Context();
  PERFGATE_RETURN_IF_ERROR(ctx);
  try {
    if (dtype == DType::kInt32) {
      return std::unique_ptr<Backend>(new GlooBackend<int32_t>(*ctx, op, bytes, in_place, layout));
    }
    return std::unique_ptr<Backend>(new GlooBackend<float>(*ctx, op, bytes, in_place, layout));
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("preparing ", OpName(op), " over Gloo: ", e.what()));
  }
}

}  // namespace perfgate::suites::collectives
