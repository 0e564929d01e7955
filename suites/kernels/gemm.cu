// GEMMs through cuBLASLt in the "TN" layout every dtype supports, fp8
// included: A row-major M×K and B column-major K×N (both read along K),
// C column-major M×N. cuBLASLt is column-major, so A is described as the
// K×M matrix it is in memory and transposed by the operation.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "suites/cuda/check.h"
#include "suites/cuda/cublaslt.h"
#include "suites/cuda/device.h"
#include "suites/kernels/gpu_kernels.h"
#include "suites/seed.h"

namespace perfgate::suites::kernels::gpu {
namespace {

// cuBLAS's recommendation for Hopper; split-K and stream-K algorithms need it.
constexpr size_t kWorkspaceBytes = 32u << 20;
constexpr int kThreads = 256;

struct LtTypes {
  cudaDataType_t in, out;
  cublasComputeType_t compute;
};

LtTypes TypesOf(GemmDtype d) {
  switch (d) {
    case GemmDtype::kFp32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case GemmDtype::kTf32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case GemmDtype::kFp16: return {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case GemmDtype::kBf16: return {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case GemmDtype::kFp8: return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    case GemmDtype::kFp8Fp32Out: return {CUDA_R_8F_E4M3, CUDA_R_32F, CUBLAS_COMPUTE_32F};
  }
  return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
}

bool IsFp8(GemmDtype d) { return d == GemmDtype::kFp8 || d == GemmDtype::kFp8Fp32Out; }

template <typename T>
__device__ T FromFloat(float x);
template <>
__device__ float FromFloat<float>(float x) { return x; }
template <>
__device__ __half FromFloat<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <>
__device__ __nv_fp8_e4m3 FromFloat<__nv_fp8_e4m3>(float x) { return __nv_fp8_e4m3(x); }  // RN, satfinite

template <typename T>
__global__ void Fill(T* p, size_t n, uint64_t seed) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = FromFloat<T>(HashUniform(seed, i));
}

// Element i of a matrix seeded by `seed`, in the dtype's storage.
absl::Status FillInput(GemmDtype d, void* p, size_t n, uint64_t seed, cudaStream_t s) {
  const auto blocks = static_cast<unsigned>((n + kThreads - 1) / kThreads);
  switch (d) {
    case GemmDtype::kFp32:
    case GemmDtype::kTf32: Fill<<<blocks, kThreads, 0, s>>>(static_cast<float*>(p), n, seed); break;
    case GemmDtype::kFp16: Fill<<<blocks, kThreads, 0, s>>>(static_cast<__half*>(p), n, seed); break;
    case GemmDtype::kBf16: Fill<<<blocks, kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed); break;
    case GemmDtype::kFp8:
    case GemmDtype::kFp8Fp32Out:
      Fill<<<blocks, kThreads, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed);
      break;
  }
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

// The host's encoding of a rounded input: what the device fill must write.
void EncodeInput(GemmDtype d, float x, unsigned char* out) {
  switch (d) {
    case GemmDtype::kFp32:
    case GemmDtype::kTf32: std::memcpy(out, &x, 4); return;
    case GemmDtype::kFp16: {
      const uint16_t h = FloatToFp16(x);
      std::memcpy(out, &h, 2);
      return;
    }
    case GemmDtype::kBf16: {
      const uint16_t h = FloatToBf16(x);
      std::memcpy(out, &h, 2);
      return;
    }
    case GemmDtype::kFp8:
    case GemmDtype::kFp8Fp32Out: *out = FloatToE4m3(x); return;
  }
}

double DecodeOutput(GemmDtype d, const unsigned char* p) {
  switch (GemmOutputBytes(d)) {
    case 2: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return d == GemmDtype::kFp16 ? Fp16ToFloat(h) : Bf16ToFloat(h);
    }
    default: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
  }
}

// One cuBLASLt matmul plan: descriptors, the heuristic's algorithm and the
// workspace, created untimed; Enqueue() is the timed work.
class LtMatmul {
 public:
  // Uploads the fp8 scales on `stream`, the stream the plan will run on.
  static absl::StatusOr<std::unique_ptr<LtMatmul>> Create(GemmDtype dtype, const GemmShape& shape,
                                                          cudaStream_t stream) {
    auto lt = cuda::LoadCublasLt();
    if (!lt.ok()) return absl::UnavailableError(lt.status().message());
    auto plan = std::unique_ptr<LtMatmul>(new LtMatmul(**lt));
    PERFGATE_RETURN_IF_ERROR(plan->Init(dtype, shape, stream));
    return plan;
  }

  ~LtMatmul() {
    if (pref_) lt_.MatmulPreferenceDestroy(pref_);
    if (a_) lt_.MatrixLayoutDestroy(a_);
    if (b_) lt_.MatrixLayoutDestroy(b_);
    if (c_) lt_.MatrixLayoutDestroy(c_);
    if (desc_) lt_.MatmulDescDestroy(desc_);
    if (handle_) lt_.Destroy(handle_);
  }

  absl::Status Enqueue(const void* a, const void* b, void* c, cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.Matmul(handle_, desc_, &alpha, a, a_, b, b_, &beta, c, c_, c,
                                               c_, &algo_, workspace_.get(), workspace_.bytes(),
                                               stream));
    return absl::OkStatus();
  }

 private:
  explicit LtMatmul(const cuda::CublasLt& lt) : lt_(lt) {}

  absl::Status Init(GemmDtype dtype, const GemmShape& shape, cudaStream_t stream) {
    const LtTypes t = TypesOf(dtype);
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.Create(&handle_));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.MatmulDescCreate(&desc_, t.compute, CUDA_R_32F));
    const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(
        lt_.MatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(
        lt_.MatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb));
    if (IsFp8(dtype)) {
      // Per-tensor scales of 1: the inputs are already in e4m3's range.
      auto scales = cuda::DeviceBuffer::Allocate(2 * sizeof(float));
      if (!scales.ok()) return scales.status();
      scales_ = std::move(*scales);
      // On the plan's stream and waited for: a plain cudaMemcpy from pageable
      // memory may return before its DMA lands, and the non-blocking stream
      // the matmul runs on does not wait for the legacy stream.
      const float ones[2] = {1.0f, 1.0f};
      PERFGATE_CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(scales_.get(), ones, sizeof ones, cudaMemcpyHostToDevice, stream));
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
      const float* a_scale = scales_.as<float>();
      const float* b_scale = scales_.as<float>() + 1;
      PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.MatmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof a_scale));
      PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.MatmulDescSetAttribute(
          desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof b_scale));
    }
    const auto m = static_cast<uint64_t>(shape.m), n = static_cast<uint64_t>(shape.n),
               k = static_cast<uint64_t>(shape.k);
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.MatrixLayoutCreate(&a_, t.in, k, m, static_cast<int64_t>(k)));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.MatrixLayoutCreate(&b_, t.in, k, n, static_cast<int64_t>(k)));
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.MatrixLayoutCreate(&c_, t.out, m, n, static_cast<int64_t>(m)));
    auto workspace = cuda::DeviceBuffer::Allocate(kWorkspaceBytes);
    if (!workspace.ok()) return workspace.status();
    workspace_ = std::move(*workspace);
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.MatmulPreferenceCreate(&pref_));
    const size_t ws = kWorkspaceBytes;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(lt_.MatmulPreferenceSetAttribute(
        pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    PERFGATE_CUBLAS_RETURN_IF_ERROR(
        lt_.MatmulAlgoGetHeuristic(handle_, desc_, a_, b_, c_, c_, pref_, 1, &result, &found));
    if (found == 0) {
      return absl::InternalError(absl::StrFormat("cuBLASLt offers no algorithm for %s %dx%dx%d",
                                                 GemmDtypeName(dtype), shape.m, shape.n, shape.k));
    }
    algo_ = result.algo;
    return absl::OkStatus();
  }

  const cuda::CublasLt& lt_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  cuda::DeviceBuffer workspace_, scales_;
};

absl::Status CheckDevice(GemmDtype dtype) {
  auto cc = cuda::ComputeCapability();
  if (!cc.ok()) return cc.status();
  if (*cc < GemmMinComputeCapability(dtype)) {
    if (IsFp8(dtype)) return absl::UnavailableError("fp8 needs compute capability 8.9 or newer");
    return absl::UnavailableError(absl::StrCat(GemmDtypeName(dtype), " GEMM needs compute capability 8.0 or newer"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyGemm(GemmDtype dtype, const GemmShape& shape, uint64_t seed) {
  PERFGATE_RETURN_IF_ERROR(CheckDevice(dtype));
  const size_t in_bytes = GemmInputBytes(dtype), out_bytes = GemmOutputBytes(dtype);
  const auto m = static_cast<size_t>(shape.m), n = static_cast<size_t>(shape.n),
             k = static_cast<size_t>(shape.k);
  // Host inputs: the seeded values rounded by the host's emulation of the
  // dtype (tf32 too, so the tensor cores' own truncation changes nothing).
  std::vector<float> a(m * k), b(n * k);
  std::vector<unsigned char> ea(m * k * in_bytes), eb(n * k * in_bytes);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = RoundToGemmInput(dtype, HashUniform(seed, i));
    EncodeInput(dtype, a[i], &ea[i * in_bytes]);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = RoundToGemmInput(dtype, HashUniform(seed + 1, i));
    EncodeInput(dtype, b[i], &eb[i * in_bytes]);
  }
  auto stream = cuda::Stream::Create();
  if (!stream.ok()) return stream.status();
  auto da = cuda::DeviceBuffer::Allocate(ea.size());
  if (!da.ok()) return da.status();
  auto db = cuda::DeviceBuffer::Allocate(eb.size());
  if (!db.ok()) return db.status();
  auto dc = cuda::DeviceBuffer::Allocate(m * n * out_bytes);
  if (!dc.ok()) return dc.status();

  // The device's conversion must agree bit for bit with the host emulation
  // (tf32 excepted: the fill stores full fp32 there).
  if (dtype != GemmDtype::kTf32) {
    PERFGATE_RETURN_IF_ERROR(FillInput(dtype, da->get(), m * k, seed, stream->get()));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream->get()));
    std::vector<unsigned char> filled(ea.size());
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpy(filled.data(), da->get(), filled.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::memcmp(&filled[i * in_bytes], &ea[i * in_bytes], in_bytes) != 0) {
        return absl::InternalError(absl::StrFormat(
            "gemm %s: the device converts %.9g differently from the host emulation (element %d)",
            GemmDtypeName(dtype), HashUniform(seed, i), i));
      }
    }
  }
  // Stream-ordered uploads: a cudaMemcpy from pageable memory may return
  // before its DMA lands, and the non-blocking stream would not wait for it.
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(da->get(), ea.data(), ea.size(), cudaMemcpyHostToDevice, stream->get()));
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(db->get(), eb.data(), eb.size(), cudaMemcpyHostToDevice, stream->get()));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream->get()));
  auto plan = LtMatmul::Create(dtype, shape, stream->get());
  if (!plan.ok()) return plan.status();
  PERFGATE_RETURN_IF_ERROR((*plan)->Enqueue(da->get(), db->get(), dc->get(), stream->get()));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream->get()));
  std::vector<unsigned char> got(m * n * out_bytes);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpy(got.data(), dc->get(), got.size(), cudaMemcpyDeviceToHost));

  std::vector<double> ref(m * n), abs_sum(m * n);
  GemmTnReference(a.data(), b.data(), shape.m, shape.n, shape.k, ref.data(), abs_sum.data());
  const GemmTolerance tol = GemmToleranceFor(dtype);
  for (size_t e = 0; e < ref.size(); ++e) {
    const double g = DecodeOutput(dtype, &got[e * out_bytes]);
    if (!GemmWithinTolerance(g, ref[e], abs_sum[e], shape.k, tol)) {
      return absl::InternalError(absl::StrFormat(
          "gemm %s %dx%dx%d verification: C[%d,%d] = %.9g, host fp64 reference %.9g "
          "(tolerance 2*(%.3g*|ref| + k*%.3g*sum|ab|), sum|ab| = %.6g)",
          GemmDtypeName(dtype), shape.m, shape.n, shape.k, e % m, e / m, g, ref[e],
          tol.output_rel, tol.accumulate_rel, abs_sum[e]));
    }
  }
  return absl::OkStatus();
}

absl::Status RunGemm(GemmDtype dtype, const GemmShape& shape, uint64_t seed, cuda::CaseHost& host) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.k % 16 != 0 || shape.m % 16 != 0) {
    return absl::InvalidArgumentError(absl::StrCat("gemm: m=", shape.m, " n=", shape.n, " k=", shape.k,
                                                   ": all must be positive, m and k multiples of 16"));
  }
  PERFGATE_RETURN_IF_ERROR(CheckDevice(dtype));
  PERFGATE_RETURN_IF_ERROR(VerifyGemm(dtype, GemmShape{128, 96, 64}, seed));
  auto stream = cuda::Stream::Create();
  if (!stream.ok()) return stream.status();
  const cudaStream_t s = stream->get();
  const auto m = static_cast<size_t>(shape.m), n = static_cast<size_t>(shape.n),
             k = static_cast<size_t>(shape.k);
  // Two operand sets, alternated, besides the L2 flush: no sample reads
  // what the previous one left in cache.
  constexpr int kSets = 2;
  std::vector<cuda::DeviceBuffer> a, b;
  for (int i = 0; i < kSets; ++i) {
    auto da = cuda::DeviceBuffer::Allocate(m * k * GemmInputBytes(dtype));
    if (!da.ok()) return da.status();
    auto db = cuda::DeviceBuffer::Allocate(n * k * GemmInputBytes(dtype));
    if (!db.ok()) return db.status();
    PERFGATE_RETURN_IF_ERROR(FillInput(dtype, da->get(), m * k, seed + 2 * i, s));
    PERFGATE_RETURN_IF_ERROR(FillInput(dtype, db->get(), n * k, seed + 2 * i + 1, s));
    a.push_back(std::move(*da));
    b.push_back(std::move(*db));
  }
  auto c = cuda::DeviceBuffer::Allocate(m * n * GemmOutputBytes(dtype));
  if (!c.ok()) return c.status();
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  auto plan = LtMatmul::Create(dtype, shape, s);
  if (!plan.ok()) return plan.status();
  auto sampler = cuda::ColdSampler::Create(s);
  if (!sampler.ok()) return sampler.status();
  host.SetFlopsPerIteration(GemmFlops(shape.m, shape.n, shape.k));
  unsigned next = 0;
  return cuda::MeasureCold(host, *sampler, [&](cudaStream_t st) {
    const unsigned set = next++ % kSets;
    return (*plan)->Enqueue(a[set].get(), b[set].get(), c->get(), st);
  });
}

}  // namespace perfgate::suites::kernels::gpu
