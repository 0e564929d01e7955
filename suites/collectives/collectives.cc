#include "suites/collectives/collectives.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "measure/engine.h"
#include "suites/collectives/backend.h"
#include "suites/collectives/gloo_backend.h"
#include "suites/collectives/lockstep.h"
#include "suites/collectives/nccl_adapter.h"

namespace perfgate::suites::collectives {
namespace {

// A sample is `iters` operations back to back between two timestamps, like
// nccl-tests; iters is chosen so a sample lasts about this long, which keeps
// clock resolution and launch overhead out of the small sizes.
constexpr double kTargetSampleS = 1e-3;
constexpr int kMaxIters = 1000;

const char* Describe(Op op) {
  switch (op) {
    case Op::kAllReduce: return "sum over every rank, result on every rank; S = buffer, busbw = algbw x 2(n-1)/n";
    case Op::kAllGather: return "each rank's block to every rank; S = gathered buffer, busbw = algbw x (n-1)/n";
    case Op::kReduceScatter: return "sum, block r of the result to rank r; S = input buffer, busbw = algbw x (n-1)/n";
    case Op::kBroadcast: return "rank 0's buffer to every rank; S = buffer, busbw = algbw";
    case Op::kAllToAll: return "block j of rank i to block i of rank j; S = send buffer, busbw = algbw x (n-1)/n";
    case Op::kSendRecv: return "ring: rank r sends to r+1 and receives from r-1; S = buffer, busbw = algbw";
  }
  return "";
}

// Sizes the batch of operations one sample times, then samples in lockstep
// over the ranks (lockstep.h), then checks the result.
absl::Status Drive(State& state, World& world, Backend& backend, Op op, const Layout& layout) {
  state.SetAlgorithmBytes(layout.algorithm_bytes);
  state.SetBusFactor(BusFactor(op, backend.ranks()));
  PERFGATE_RETURN_IF_ERROR(backend.Fill());
  // The fastest of a few single operations sizes the batch: one slow first
  // call (a page fault, a descheduled rank) must not shrink every sample.
  double fastest = 0;
  for (int trial = 0; trial < 3; ++trial) {
    PERFGATE_RETURN_IF_ERROR(world.Barrier());
    auto one = backend.Time(1);
    PERFGATE_RETURN_IF_ERROR(one);
    fastest = trial == 0 ? *one : std::min(fastest, *one);
  }
  std::vector<double> agreed{fastest};
  PERFGATE_RETURN_IF_ERROR(world.AllReduceMax(agreed));
  const int iters = static_cast<int>(
      std::clamp(std::ceil(kTargetSampleS / std::max(agreed[0], 1e-9)), 1.0, double{kMaxIters}));
  auto m = MeasureInLockstep(
      world, state.options(), state.throttle_source(), state.inject_fraction(),
      [&]() { return backend.Time(1).status(); },
      [&]() -> absl::StatusOr<double> {
        auto elapsed = backend.Time(iters);
        PERFGATE_RETURN_IF_ERROR(elapsed);
        return *elapsed / iters;
      });
  PERFGATE_RETURN_IF_ERROR(m);
  state.Record(*m);

  // The check runs on fresh inputs: the timed loop fed in-place results back
  // in as inputs, so its final buffers say nothing about one operation.
  PERFGATE_RETURN_IF_ERROR(backend.Fill());
  PERFGATE_RETURN_IF_ERROR(world.Barrier());
  if (auto t = backend.Time(1); !t.ok()) return t.status();
  auto wrong = backend.Check(world.options().corrupt_rank);
  PERFGATE_RETURN_IF_ERROR(wrong);
  // Rank 0 alone reports; it must fail the case when any rank saw a wrong result.
  std::vector<double> first_bad{wrong->empty() ? 0.0 : double(world.size() - world.rank())};
  PERFGATE_RETURN_IF_ERROR(world.AllReduceMax(first_bad));
  if (!wrong->empty()) {
    state.Fail(*wrong);
  } else if (first_bad[0] > 0) {
    state.Fail(absl::StrCat(OpName(op), ": ", layout.algorithm_bytes, " B: rank ",
                            world.size() - static_cast<int>(first_bad[0]),
                            " got a wrong result (its own output names the element)"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string Mismatch(Op op, size_t bytes, int rank, size_t index, double got, int32_t expected) {
  return absl::StrFormat("%s: %d B, rank %d: element %d is %g, expected %d", OpName(op), bytes,
                         rank, index, got, expected);
}

std::vector<std::string> GeometricSizes(uint64_t min, uint64_t max, uint64_t factor) {
  std::vector<std::string> out;
  if (min == 0 || min > max || factor < 2) return out;
  for (uint64_t b = min; b <= max; b *= factor) {
    out.push_back(std::to_string(b));
    if (b > max / factor) break;
  }
  return out;
}

void RunCase(State& state, World& world, Op op) {
  const std::string& backend_name = state.Param("backend");
  const int64_t bytes = state.IntParam("bytes");
  const int64_t in_place = state.IntParam("inplace");
  if (state.failed()) return;
  DType dtype;
  if (!ParseDType(state.Param("dtype"), &dtype)) {
    return state.Fail(absl::StrCat("dtype '", state.Param("dtype"), "': expected float32 or int32"));
  }
  if (bytes <= 0) return state.Fail("bytes must be positive");
  if (in_place != 0 && in_place != 1) return state.Fail("inplace must be 0 or 1");
  if (in_place == 1 && !HasInPlace(op)) {
    return state.Skip(absl::StrCat(OpName(op), " has no in-place form: its send buffer would be "
                                   "overwritten while it is still being sent"));
  }
  const size_t size = static_cast<size_t>(bytes);
  std::unique_ptr<Backend> backend;
  Layout layout;
  if (backend_name == "gloo") {
    // A host case: the GPU's clocks and energy counter say nothing about it.
    state.set_throttle_source(nullptr);
    if (op == Op::kSendRecv && world.size() < 2) {
      return state.Skip("sendrecv over Gloo needs at least 2 ranks (--world-size)");
    }
    layout = LayoutOf(op, size, world.size(), dtype);
    if (layout.algorithm_bytes == 0) {
      return state.Skip(absl::StrCat(bytes, " B leaves no 16-byte block for each of ", world.size(),
                                     " ranks (nccl-tests' rounding)"));
    }
    auto made = MakeGlooBackend(world, op, size, in_place == 1, dtype, layout);
    if (!made.ok()) return state.Fail(std::string(made.status().message()));
    backend = std::move(*made);
  } else if (backend_name == "nccl") {
    auto made = MakeNcclBackend(world, op, size, in_place == 1, dtype, &layout);
    if (!made.ok()) {
      if (made.status().code() == absl::StatusCode::kFailedPrecondition) {
        return state.Skip(std::string(made.status().message()));
      }
      return state.Fail(std::string(made.status().message()));
    }
    if (layout.algorithm_bytes == 0) {
      return state.Skip(absl::StrCat(bytes, " B leaves no 16-byte block for each of ",
                                     (*made)->ranks(), " ranks (nccl-tests' rounding)"));
    }
    backend = std::move(*made);
  } else {
    return state.Fail(absl::StrCat("backend '", backend_name, "': expected gloo or nccl"));
  }
  if (auto s = Drive(state, world, *backend, op, layout); !s.ok()) {
    state.Fail(std::string(s.message()));
  }
}

void Register(Registry& registry) {
  for (Op op : kAllOps) {
    std::vector<std::string> in_place = {"0"};
    if (HasInPlace(op)) in_place.push_back("1");
    registry.Add({.suite = "collectives",
                  .name = OpName(op),
                  .description = Describe(op),
                  .axes = {{"backend", {"gloo"}},
                           {"bytes", GeometricSizes(kDefaultMinBytes, kDefaultMaxBytes, 2)},
                           {"dtype", {"float32"}},
                           {"inplace", in_place}},
                  .metrics = {MetricKind::kTime, MetricKind::kAlgBandwidth,
                              MetricKind::kBusBandwidth},
                  .body = [op](State& state) { RunCase(state, ProcessWorld(), op); },
                  .only_when_named = true});
  }
}

}  // namespace perfgate::suites::collectives
