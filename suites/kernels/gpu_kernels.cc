// Registration of the kernels suite's CUDA backend. The bodies live in .cu
// files (C++17); this file adapts a State to them, keeps the ceilings, and
// lets every case skip with the reason when there is no GPU or no CUDA.
#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "suites/kernels/ceilings.h"
#include "suites/kernels/kernels.h"
#include "suites/kernels/numerics.h"
#include "suites/seed.h"

#if PERFGATE_HAVE_CUDA
#include "suites/cuda/device.h"
#include "suites/cuda/state_host.h"
#include "suites/kernels/gpu_kernels.h"
#endif

namespace perfgate::suites::kernels {
namespace {

// A fixed 1 GiB rather than a multiple of the L2 read at run time: the key
// must mean the same work on every SKU, and 1 GiB is over 4x the L2 of every
// current device (50 MiB on H100, 126 MiB on B200).
constexpr const char* kDeviceBytes = "1073741824";
constexpr const char* kRmsRows = "16384";
constexpr const char* kRmsHidden = "8192";
constexpr const char* kCeilingGemmSize = "8192";
constexpr const char* kBuiltWithoutCuda = "built without CUDA";

const std::vector<std::string>& GemmDtypes() {
  static const std::vector<std::string> d = {"fp32", "tf32", "fp16", "bf16", "fp8"};
  return d;
}

#if PERFGATE_HAVE_CUDA
bool NeedsFp8(const BenchmarkId& id) {
  auto dtype = id.params.find("dtype");
  if (dtype != id.params.end()) return dtype->second.rfind("fp8", 0) == 0;
  auto what = id.params.find("what");
  return what != id.params.end() && what->second.rfind("gemm_fp8", 0) == 0;
}

#endif

std::string GpuUnavailable(const BenchmarkId& id) {
#if PERFGATE_HAVE_CUDA
  if (absl::Status s = cuda::DeviceAvailable(); !s.ok()) return std::string(s.message());
  if (NeedsFp8(id)) {
    auto cc = cuda::ComputeCapability();
    if (!cc.ok()) return std::string(cc.status().message());
    if (*cc < 89) return "fp8 needs compute capability 8.9 or newer";
  }
  return "";
#else
  return kBuiltWithoutCuda;
#endif
}

const std::vector<MetricKind>& CopyMetrics() {
  static const std::vector<MetricKind> m = {MetricKind::kTime, MetricKind::kBandwidth};
  return m;
}

const std::vector<MetricKind>& GemmMetrics() {
  static const std::vector<MetricKind> m = {MetricKind::kTime, MetricKind::kTflops};
  return m;
}

#if PERFGATE_HAVE_CUDA
size_t MetricIndex(const std::vector<MetricKind>& metrics, MetricKind kind) {
  return static_cast<size_t>(std::find(metrics.begin(), metrics.end(), kind) - metrics.begin());
}

// A successful case offers its values to the ceiling it may set.
void OfferIfMeasured(State& state, const std::vector<MetricKind>& metrics, MetricKind kind,
                     const std::string& what) {
  if (state.failed() || state.skipped() || !state.measured()) return;
  Ceilings::Process().Offer(what, state.id().Key(),
                            UnthrottledValues(state.samples(), MetricIndex(metrics, kind)));
}
#endif

void DeviceCopy(State& state) {
  const int64_t bytes = state.IntParam("bytes");
  if (state.failed()) return;
#if PERFGATE_HAVE_CUDA
  cuda::StateHost host(state);
  cuda::Conclude(state, gpu::RunDeviceCopy(bytes, host));
  OfferIfMeasured(state, CopyMetrics(), MetricKind::kBandwidth, "copy");
#else
  static_cast<void>(bytes);
  state.Skip(kBuiltWithoutCuda);
#endif
}

void DeviceTriad(State& state) {
  const int64_t bytes = state.IntParam("bytes");
  if (state.failed()) return;
#if PERFGATE_HAVE_CUDA
  cuda::StateHost host(state);
  cuda::Conclude(state, gpu::RunDeviceTriad(bytes, host));
#else
  static_cast<void>(bytes);
  state.Skip(kBuiltWithoutCuda);
#endif
}

void Gemm(State& state) {
  const auto dtype = ParseGemmDtype(state.Param("dtype"));
  const int64_t m = state.IntParam("m"), n = state.IntParam("n"), k = state.IntParam("k");
  if (state.failed()) return;
  if (!dtype) {
    return state.Fail(absl::StrCat("dtype '", state.Param("dtype"),
                                   "' is not one of fp32, tf32, fp16, bf16, fp8, fp8_f32out"));
  }
#if PERFGATE_HAVE_CUDA
  cuda::StateHost host(state);
  cuda::Conclude(state, gpu::RunGemm(*dtype, gpu::GemmShape{m, n, k}, CaseSeed(state.id().Key()), host));
  OfferIfMeasured(state, GemmMetrics(), MetricKind::kTflops,
                  absl::StrCat("gemm_", std::string(GemmDtypeName(*dtype))));
#else
  static_cast<void>(m + n + k);
  state.Skip(kBuiltWithoutCuda);
#endif
}

#if PERFGATE_HAVE_CUDA
// Runs a ceiling's source case into a State of its own (it offers its
// values as it would in a run) and reports what kept it from measuring.
void MeasureSource(State& state, const BenchmarkId& source, const std::vector<MetricKind>& metrics,
                   void (*body)(State&)) {
  State scratch(source, metrics, state.options(), 0);
  body(scratch);
  if (scratch.skipped()) return state.Skip(scratch.reason());
  if (scratch.failed() || !scratch.measured()) {
    return state.Fail(absl::StrCat("measuring ", source.Key(), " for the ceiling failed: ", scratch.reason()));
  }
}

// The best copy median of this run; measured here, once, when no copy ran
// before (a filter that selected rmsnorm alone).
std::optional<double> CopyRoof(State& state) {
  if (auto best = Ceilings::Process().Best("copy")) return best->median;
  MeasureSource(state, BenchmarkId{"kernels", "device_copy", {{"bytes", kDeviceBytes}}}, CopyMetrics(),
                DeviceCopy);
  if (state.failed() || state.skipped()) return std::nullopt;
  if (auto best = Ceilings::Process().Best("copy")) return best->median;
  state.Fail("the copy roof could not be measured");
  return std::nullopt;
}
#endif

void RmsNorm(State& state) {
  const int64_t rows = state.IntParam("rows"), hidden = state.IntParam("hidden");
  if (state.failed()) return;
#if PERFGATE_HAVE_CUDA
  if (absl::Status s = cuda::DeviceAvailable(); !s.ok()) return state.Skip(std::string(s.message()));
  const std::optional<double> roof = CopyRoof(state);
  if (!roof) return;
  cuda::StateHost host(state);
  cuda::Conclude(state, gpu::RunRmsNorm(rows, hidden, *roof, host));
#else
  static_cast<void>(rows + hidden);
  state.Skip(kBuiltWithoutCuda);
#endif
}

void Ceiling(State& state) {
  const std::string what = state.Param("what");
  const std::optional<MetricKind> kind = CeilingMetric(what);
  if (!kind) {
    return state.Fail(absl::StrCat("what='", what, "': expected copy or gemm_<dtype> (",
                                   "fp32, tf32, fp16, bf16, fp8, fp8_f32out)"));
  }
#if PERFGATE_HAVE_CUDA
  if (std::string why = GpuUnavailable(state.id()); !why.empty()) return state.Skip(why);
  if (!Ceilings::Process().Best(what)) {
    if (what == "copy") {
      MeasureSource(state, BenchmarkId{"kernels", "device_copy", {{"bytes", kDeviceBytes}}},
                    CopyMetrics(), DeviceCopy);
    } else {
      MeasureSource(state,
                    BenchmarkId{"kernels", "gemm",
                                {{"dtype", what.substr(5)}, {"m", kCeilingGemmSize},
                                 {"n", kCeilingGemmSize}, {"k", kCeilingGemmSize}}},
                    GemmMetrics(), Gemm);
    }
    if (state.failed() || state.skipped()) return;
  }
  const std::optional<CeilingSource> best = Ceilings::Process().Best(what);
  if (!best) return state.Fail(absl::StrCat("no case measured the ", what, " ceiling"));
  RecordCeiling(state, *best, *kind);
#else
  state.Skip(kBuiltWithoutCuda);
#endif
}

}  // namespace

std::optional<double> DeviceGemmPeak(State& state, const std::string& dtype) {
#if PERFGATE_HAVE_CUDA
  const std::string what = "gemm_" + dtype;
  if (!Ceilings::Process().Best(what)) {
    MeasureSource(state,
                  BenchmarkId{"kernels", "gemm",
                              {{"dtype", dtype}, {"m", kCeilingGemmSize}, {"n", kCeilingGemmSize},
                               {"k", kCeilingGemmSize}}},
                  GemmMetrics(), Gemm);
    if (state.failed() || state.skipped()) return std::nullopt;
  }
  const std::optional<CeilingSource> best = Ceilings::Process().Best(what);
  if (!best) {
    state.Fail(absl::StrCat("the ", what, " peak could not be measured"));
    return std::nullopt;
  }
  return best->median * 1e12;  // TFLOP/s
#else
  state.Skip(kBuiltWithoutCuda);
  return std::nullopt;
#endif
}

void RegisterGpu(Registry& registry) {
  registry.Add({.suite = "kernels",
                .name = "device_copy",
                .description = "device-to-device copy, 16-byte vectors; bytes read + written (decimal GB)",
                .axes = {{"bytes", {kDeviceBytes}}},
                .metrics = CopyMetrics(),
                .body = DeviceCopy,
                .unavailable = GpuUnavailable});
  registry.Add({.suite = "kernels",
                .name = "device_triad",
                .description = "STREAM triad a = b + 3c on device doubles; bytes read + written",
                .axes = {{"bytes", {kDeviceBytes}}},
                .metrics = CopyMetrics(),
                .body = DeviceTriad,
                .unavailable = GpuUnavailable});
  registry.Add({.suite = "kernels",
                .name = "gemm",
                .description = "cuBLASLt C(MxN) = A(MxK) B(KxN), 2*M*N*K flops, cold samples",
                .axes = {{"dtype", GemmDtypes()}},
                .points = {{{"m", "4096"}, {"n", "4096"}, {"k", "4096"}},
                           {{"m", "8192"}, {"n", "8192"}, {"k", "8192"}},
                           {{"m", "4096"}, {"n", "14336"}, {"k", "4096"}},
                           {{"m", "8192"}, {"n", "8192"}, {"k", "28672"}}},
                .metrics = GemmMetrics(),
                .body = Gemm,
                .unavailable = GpuUnavailable});
  registry.Add({.suite = "kernels",
                .name = "rmsnorm",
                .description = "fused bf16 RMSNorm, fp32 accumulation; bandwidth and its fraction of "
                               "the best device_copy of the run",
                .axes = {{"rows", {kRmsRows}}, {"hidden", {kRmsHidden}}},
                .metrics = {MetricKind::kTime, MetricKind::kBandwidth, MetricKind::kRoofFraction},
                .body = RmsNorm,
                .unavailable = GpuUnavailable});
  std::vector<std::string> ceilings = {"copy"};
  for (const std::string& d : GemmDtypes()) ceilings.push_back("gemm_" + d);
  registry.Add({.suite = "kernels",
                .name = "ceiling",
                .description = "the device's measured ceilings: the best case median of this run "
                               "(copy GB/s, GEMM TFLOP/s per dtype), its samples reported again",
                .axes = {{"what", ceilings}},
                .body = Ceiling,
                .metrics_for =
                    [](const BenchmarkId& id) {
                      const auto kind = CeilingMetric(id.params.at("what"));
                      return std::vector<MetricKind>{kind.value_or(MetricKind::kBandwidth)};
                    },
                .unavailable = GpuUnavailable});
}

}  // namespace perfgate::suites::kernels
