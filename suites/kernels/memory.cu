// Memory-bound device kernels of the kernels suite: copy, triad and a fused
// RMSNorm. Each is checked exactly (copy, triad) or within two bf16 ulps
// (RMSNorm) against the host before it is measured.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "suites/cuda/check.h"
#include "suites/cuda/device.h"
#include "suites/kernels/gpu_kernels.h"
#include "suites/seed.h"

namespace perfgate::suites::kernels::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;  // 16-byte elements per thread: enough loads in flight for HBM

// The seeds of each buffer, so a host check can recompute any element.
constexpr uint64_t kSrcSeed = 11, kBSeed = 12, kCSeed = 13, kXSeed = 14, kWSeed = 15;
constexpr double kTriadScalar = 3.0;
constexpr float kRmsEps = 1e-6f;

__global__ void FillWords(uint32_t* p, size_t n, uint64_t seed) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = __float_as_uint(HashUniform(seed, i));
}

__global__ void FillDoubles(double* p, size_t n, uint64_t seed) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = HashUniform(seed, i);
}

__global__ void FillBf16(__nv_bfloat16* p, size_t n, uint64_t seed) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = __float2bfloat16_rn(HashUniform(seed, i));
}

__global__ void Copy(const int4* __restrict__ src, int4* __restrict__ dst, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) * kUnroll + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u, i += blockDim.x) {
    if (i < n) dst[i] = src[i];
  }
}

__global__ void Triad(double2* __restrict__ a, const double2* __restrict__ b,
                      const double2* __restrict__ c, double s, size_t n) {
  size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) * kUnroll + threadIdx.x;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u, i += blockDim.x) {
    if (i < n) {
      const double2 x = b[i], y = c[i];
      // No fused multiply-add: the host reference rounds the product first.
      a[i] = make_double2(__dadd_rn(x.x, __dmul_rn(s, y.x)), __dadd_rn(x.y, __dmul_rn(s, y.y)));
    }
  }
}

constexpr int kRmsThreads = 256;
constexpr int kRmsMaxVecs = static_cast<int>(kRmsNormMaxHidden / 8 / kRmsThreads);

// One block per row; each thread keeps its 8-element vectors in registers
// between the sum of squares and the scaling, so x is read from HBM once.
__global__ void __launch_bounds__(kRmsThreads) RmsNorm(const uint4* __restrict__ x,
                                                       const uint4* __restrict__ w,
                                                       uint4* __restrict__ y, int hidden_vecs,
                                                       float inv_hidden, float eps) {
  const uint4* xr = x + blockIdx.x * static_cast<size_t>(hidden_vecs);
  uint4* yr = y + blockIdx.x * static_cast<size_t>(hidden_vecs);
  uint4 v[kRmsMaxVecs];
  float ss = 0;
#pragma unroll
  for (int j = 0; j < kRmsMaxVecs; ++j) {
    const int idx = threadIdx.x + j * kRmsThreads;
    if (idx < hidden_vecs) {
      v[j] = xr[idx];
      const auto* h = reinterpret_cast<const __nv_bfloat162*>(&v[j]);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float2 f = __bfloat1622float2(h[q]);
        ss += f.x * f.x + f.y * f.y;
      }
    }
  }
  for (int off = 16; off > 0; off >>= 1) ss += __shfl_xor_sync(0xffffffffu, ss, off);
  __shared__ float partial[kRmsThreads / 32];
  __shared__ float scale;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) partial[warp] = ss;
  __syncthreads();
  if (warp == 0) {
    float t = lane < kRmsThreads / 32 ? partial[lane] : 0.0f;
    for (int off = 16; off > 0; off >>= 1) t += __shfl_xor_sync(0xffffffffu, t, off);
    if (lane == 0) scale = rsqrtf(t * inv_hidden + eps);
  }
  __syncthreads();
  const float r = scale;
#pragma unroll
  for (int j = 0; j < kRmsMaxVecs; ++j) {
    const int idx = threadIdx.x + j * kRmsThreads;
    if (idx < hidden_vecs) {
      const uint4 wv = w[idx];
      const auto* xh = reinterpret_cast<const __nv_bfloat162*>(&v[j]);
      const auto* wh = reinterpret_cast<const __nv_bfloat162*>(&wv);
      uint4 out;
      auto* oh = reinterpret_cast<__nv_bfloat162*>(&out);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const float2 xf = __bfloat1622float2(xh[q]), wf = __bfloat1622float2(wh[q]);
        oh[q] = __floats2bfloat162_rn(xf.x * r * wf.x, xf.y * r * wf.y);
      }
      yr[idx] = out;
    }
  }
}

unsigned Blocks(size_t n, size_t per_block) { return static_cast<unsigned>((n + per_block - 1) / per_block); }

absl::Status FillWordsOn(cudaStream_t s, uint32_t* p, size_t n, uint64_t seed) {
  FillWords<<<Blocks(n, kThreads), kThreads, 0, s>>>(p, n, seed);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

absl::Status FillDoublesOn(cudaStream_t s, double* p, size_t n, uint64_t seed) {
  FillDoubles<<<Blocks(n, kThreads), kThreads, 0, s>>>(p, n, seed);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

absl::Status EnqueueCopy(cudaStream_t s, const void* src, void* dst, size_t bytes) {
  const size_t n = bytes / 16;
  Copy<<<Blocks(n, kThreads * kUnroll), kThreads, 0, s>>>(static_cast<const int4*>(src),
                                                          static_cast<int4*>(dst), n);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

absl::Status EnqueueTriad(cudaStream_t s, double* a, const double* b, const double* c, size_t bytes) {
  const size_t n = bytes / 16;
  Triad<<<Blocks(n, kThreads * kUnroll), kThreads, 0, s>>>(
      reinterpret_cast<double2*>(a), reinterpret_cast<const double2*>(b),
      reinterpret_cast<const double2*>(c), kTriadScalar, n);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

absl::Status EnqueueRmsNorm(cudaStream_t s, const void* x, const void* w, void* y, int64_t rows,
                            int64_t hidden) {
  RmsNorm<<<static_cast<unsigned>(rows), kRmsThreads, 0, s>>>(
      static_cast<const uint4*>(x), static_cast<const uint4*>(w), static_cast<uint4*>(y),
      static_cast<int>(hidden / 8), 1.0f / static_cast<float>(hidden), kRmsEps);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

uint32_t HostWord(uint64_t seed, size_t i) {
  const float f = HashUniform(seed, i);
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

absl::Status CheckBytes(int64_t bytes, const char* what) {
  if (bytes < 1024 || bytes % 16 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": bytes=", bytes, " must be at least 1024 and a multiple of 16"));
  }
  return absl::OkStatus();
}

// Copies `count` words spread over [0, n) — the first and last included —
// back from the device and compares them with the fill's hash: a cheap
// check that the measured size was copied whole, end included.
absl::Status CheckSpreadWords(const uint32_t* device, size_t n, uint64_t seed, const char* what) {
  constexpr size_t kCount = 4096;
  const size_t count = n < kCount ? n : kCount;
  for (size_t j = 0; j < count; ++j) {
    const size_t i = count == 1 ? 0 : j * (n - 1) / (count - 1);
    uint32_t got = 0;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpy(&got, device + i, sizeof got, cudaMemcpyDeviceToHost));
    if (got != HostWord(seed, i)) {
      return absl::InternalError(absl::StrFormat("%s: word %d of %d is 0x%08x, expected 0x%08x",
                                                 what, i, n, got, HostWord(seed, i)));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyCopy(cudaStream_t s) {
  // Odd on purpose: not a multiple of a block's 4096 bytes, so the tail runs.
  constexpr size_t kBytes = (1 << 20) + 48;
  auto src = cuda::DeviceBuffer::Allocate(kBytes);
  if (!src.ok()) return src.status();
  auto dst = cuda::DeviceBuffer::Allocate(kBytes);
  if (!dst.ok()) return dst.status();
  PERFGATE_RETURN_IF_ERROR(FillWordsOn(s, src->as<uint32_t>(), kBytes / 4, kSrcSeed));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(dst->get(), 0, kBytes, s));
  PERFGATE_RETURN_IF_ERROR(EnqueueCopy(s, src->get(), dst->get(), kBytes));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  std::vector<uint32_t> got(kBytes / 4);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpy(got.data(), dst->get(), kBytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != HostWord(kSrcSeed, i)) {
      return absl::InternalError(absl::StrFormat(
          "device_copy verification: word %d is 0x%08x, expected 0x%08x", i, got[i], HostWord(kSrcSeed, i)));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyTriad(cudaStream_t s) {
  constexpr size_t kBytes = (1 << 20) + 48;
  constexpr size_t kN = kBytes / sizeof(double);
  std::vector<cuda::DeviceBuffer> bufs;
  for (int i = 0; i < 3; ++i) {
    auto b = cuda::DeviceBuffer::Allocate(kBytes);
    if (!b.ok()) return b.status();
    bufs.push_back(std::move(*b));
  }
  PERFGATE_RETURN_IF_ERROR(FillDoublesOn(s, bufs[1].as<double>(), kN, kBSeed));
  PERFGATE_RETURN_IF_ERROR(FillDoublesOn(s, bufs[2].as<double>(), kN, kCSeed));
  PERFGATE_RETURN_IF_ERROR(
      EnqueueTriad(s, bufs[0].as<double>(), bufs[1].as<double>(), bufs[2].as<double>(), kBytes));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  std::vector<double> got(kN);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpy(got.data(), bufs[0].get(), kBytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < kN; ++i) {
    const double b = HashUniform(kBSeed, i), c = HashUniform(kCSeed, i);
    const double want = b + kTriadScalar * c;
    if (got[i] != want) {
      return absl::InternalError(absl::StrFormat(
          "device_triad verification: a[%d] = %.17g, expected %.17g", i, got[i], want));
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyRmsNorm(cudaStream_t s) {
  // 1000 is not a multiple of the block's 2048 elements: partial vectors run.
  constexpr int64_t kRows = 64, kHidden = 1000;
  std::vector<uint16_t> x(kRows * kHidden), w(kHidden), y(kRows * kHidden);
  for (size_t i = 0; i < x.size(); ++i) x[i] = FloatToBf16(HashUniform(kXSeed, i));
  for (size_t i = 0; i < w.size(); ++i) w[i] = FloatToBf16(HashUniform(kWSeed, i));
  auto dx = cuda::DeviceBuffer::Allocate(x.size() * 2);
  if (!dx.ok()) return dx.status();
  auto dw = cuda::DeviceBuffer::Allocate(w.size() * 2);
  if (!dw.ok()) return dw.status();
  auto dy = cuda::DeviceBuffer::Allocate(y.size() * 2);
  if (!dy.ok()) return dy.status();
  // Stream-ordered: a cudaMemcpy from pageable memory may return before its
  // DMA lands, and the kernel's non-blocking stream would not wait for it.
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dx->get(), x.data(), x.size() * 2, cudaMemcpyHostToDevice, s));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dw->get(), w.data(), w.size() * 2, cudaMemcpyHostToDevice, s));
  PERFGATE_RETURN_IF_ERROR(EnqueueRmsNorm(s, dx->get(), dw->get(), dy->get(), kRows, kHidden));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpy(y.data(), dy->get(), y.size() * 2, cudaMemcpyDeviceToHost));
  std::vector<float> ref(y.size());
  RmsNormReference(x.data(), w.data(), kRows, kHidden, kRmsEps, ref.data());
  for (size_t i = 0; i < y.size(); ++i) {
    const float got = Bf16ToFloat(y[i]);
    if (!RmsNormWithinTolerance(got, ref[i])) {
      return absl::InternalError(absl::StrFormat(
          "rmsnorm verification: y[%d] (row %d) = %.8g, host reference %.8g (tolerance 2 bf16 ulps)",
          i, i / kHidden, got, ref[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunDeviceCopy(int64_t bytes, cuda::CaseHost& host) {
  PERFGATE_RETURN_IF_ERROR(cuda::DeviceAvailable());
  PERFGATE_RETURN_IF_ERROR(CheckBytes(bytes, "device_copy"));
  auto stream = cuda::Stream::Create();
  if (!stream.ok()) return stream.status();
  const cudaStream_t s = stream->get();
  PERFGATE_RETURN_IF_ERROR(VerifyCopy(s));
  const auto n = static_cast<size_t>(bytes);
  auto src = cuda::DeviceBuffer::Allocate(n);
  if (!src.ok()) return src.status();
  auto dst = cuda::DeviceBuffer::Allocate(n);
  if (!dst.ok()) return dst.status();
  PERFGATE_RETURN_IF_ERROR(FillWordsOn(s, src->as<uint32_t>(), n / 4, kSrcSeed));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  auto sampler = cuda::ColdSampler::Create(s);
  if (!sampler.ok()) return sampler.status();
  host.SetBytesPerIteration(CopyBytesMoved(bytes));
  PERFGATE_RETURN_IF_ERROR(cuda::MeasureCold(
      host, *sampler, [&](cudaStream_t st) { return EnqueueCopy(st, src->get(), dst->get(), n); }));
  return CheckSpreadWords(dst->as<uint32_t>(), n / 4, kSrcSeed, "device_copy");
}

absl::Status RunDeviceTriad(int64_t bytes, cuda::CaseHost& host) {
  PERFGATE_RETURN_IF_ERROR(cuda::DeviceAvailable());
  PERFGATE_RETURN_IF_ERROR(CheckBytes(bytes, "device_triad"));
  auto stream = cuda::Stream::Create();
  if (!stream.ok()) return stream.status();
  const cudaStream_t s = stream->get();
  PERFGATE_RETURN_IF_ERROR(VerifyTriad(s));
  const auto n = static_cast<size_t>(bytes);
  std::vector<cuda::DeviceBuffer> bufs;
  for (int i = 0; i < 3; ++i) {
    auto b = cuda::DeviceBuffer::Allocate(n);
    if (!b.ok()) return b.status();
    bufs.push_back(std::move(*b));
  }
  PERFGATE_RETURN_IF_ERROR(FillDoublesOn(s, bufs[1].as<double>(), n / 8, kBSeed));
  PERFGATE_RETURN_IF_ERROR(FillDoublesOn(s, bufs[2].as<double>(), n / 8, kCSeed));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  auto sampler = cuda::ColdSampler::Create(s);
  if (!sampler.ok()) return sampler.status();
  host.SetBytesPerIteration(TriadBytesMoved(bytes));
  PERFGATE_RETURN_IF_ERROR(cuda::MeasureCold(host, *sampler, [&](cudaStream_t st) {
    return EnqueueTriad(st, bufs[0].as<double>(), bufs[1].as<double>(), bufs[2].as<double>(), n);
  }));
  // The last element of the measured size, recomputed on the host.
  const size_t last = n / 8 - 1;
  double got = 0;
  PERFGATE_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(&got, bufs[0].as<double>() + last, sizeof got, cudaMemcpyDeviceToHost));
  const double want = static_cast<double>(HashUniform(kBSeed, last)) +
                      kTriadScalar * static_cast<double>(HashUniform(kCSeed, last));
  if (got != want) {
    return absl::InternalError(absl::StrFormat("device_triad: a[%d] = %.17g, expected %.17g", last, got, want));
  }
  return absl::OkStatus();
}

absl::Status RunRmsNorm(int64_t rows, int64_t hidden, double roof_gbs, cuda::CaseHost& host) {
  PERFGATE_RETURN_IF_ERROR(cuda::DeviceAvailable());
  if (rows <= 0 || rows > 0x7fffffff || hidden <= 0 || hidden % 8 != 0 || hidden > kRmsNormMaxHidden) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rmsnorm: rows=", rows, " hidden=", hidden, ": rows must be positive and hidden a multiple of 8 up to ",
        kRmsNormMaxHidden));
  }
  auto stream = cuda::Stream::Create();
  if (!stream.ok()) return stream.status();
  const cudaStream_t s = stream->get();
  PERFGATE_RETURN_IF_ERROR(VerifyRmsNorm(s));
  const auto elements = static_cast<size_t>(rows * hidden);
  auto x = cuda::DeviceBuffer::Allocate(elements * 2);
  if (!x.ok()) return x.status();
  auto w = cuda::DeviceBuffer::Allocate(static_cast<size_t>(hidden) * 2);
  if (!w.ok()) return w.status();
  auto y = cuda::DeviceBuffer::Allocate(elements * 2);
  if (!y.ok()) return y.status();
  FillBf16<<<Blocks(elements, kThreads), kThreads, 0, s>>>(x->as<__nv_bfloat16>(), elements, kXSeed);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  FillBf16<<<Blocks(hidden, kThreads), kThreads, 0, s>>>(w->as<__nv_bfloat16>(), hidden, kWSeed);
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s));
  auto sampler = cuda::ColdSampler::Create(s);
  if (!sampler.ok()) return sampler.status();
  host.SetBytesPerIteration(RmsNormBytesMoved(rows, hidden));
  host.SetRoof(roof_gbs);
  return cuda::MeasureCold(host, *sampler, [&](cudaStream_t st) {
    return EnqueueRmsNorm(st, x->get(), w->get(), y->get(), rows, hidden);
  });
}

}  // namespace perfgate::suites::kernels::gpu
