// The GPU timing engine. The blocking kernel follows nvbench
// (nvbench/blocking_kernel.cu): a single thread polls a flag in mapped host
// memory, and a %globaltimer deadline guarantees it ends.
#include "suites/cuda/device.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "suites/cuda/check.h"
#include "suites/cuda/visible_devices.h"

namespace perfgate::cuda {
namespace {

__device__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void BlockStream(const volatile int32_t* release, volatile int32_t* timed_out,
                            uint64_t timeout_ns) {
  const uint64_t start = GlobalTimerNs();
  while (*release == 0) {
    if (GlobalTimerNs() - start > timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
  }
}

// Spins on %globaltimer, not clock64: the SM clock under load is below the
// peak cudaDevAttrClockRate states, and a cycle count taken from it would
// inject more time than asked for, overstating what the gate can detect.
__global__ void Spin(uint64_t ns) {
  const uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < ns) {
  }
}

// "No device" and "no driver" describe the machine: UNAVAILABLE, so the
// case is skipped with the runtime's words.
absl::Status Unavailable(cudaError_t e, const char* call) {
  return absl::UnavailableError(absl::StrCat(std::string(call), ": ", std::string(cudaGetErrorString(e)),
                                             " (", std::string(cudaGetErrorName(e)), ")"));
}

bool MachineError(cudaError_t e) {
  return e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
         e == cudaErrorInitializationError || e == cudaErrorSystemDriverMismatch ||
         e == cudaErrorCompatNotSupportedOnDevice;
}

}  // namespace

absl::Status DeviceAvailable() { return VisibleDevices().status(); }

absl::StatusOr<int> ComputeCapability() {
  PERFGATE_RETURN_IF_ERROR(DeviceAvailable());
  int major = 0, minor = 0;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
  return major * 10 + minor;
}

absl::StatusOr<DeviceInfo> CurrentDevice() {
  PERFGATE_RETURN_IF_ERROR(DeviceAvailable());
  DeviceInfo d;
  const cudaError_t e = cudaGetDevice(&d.ordinal);
  if (e != cudaSuccess) {
    if (MachineError(e)) return Unavailable(e, "cudaGetDevice");
    return CudaError(e, "cudaGetDevice", __FILE__, __LINE__);
  }
  int l2 = 0, clock_khz = 0;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&d.cc_major, cudaDevAttrComputeCapabilityMajor, d.ordinal));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&d.cc_minor, cudaDevAttrComputeCapabilityMinor, d.ordinal));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&d.sm_count, cudaDevAttrMultiProcessorCount, d.ordinal));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, d.ordinal));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d.ordinal));
  d.l2_bytes = static_cast<size_t>(l2);
  d.sm_clock_khz = clock_khz;
  return d;
}

void DeviceBuffer::Free::operator()(void* p) const { PERFGATE_CUDA_CHECK(cudaFree(p)); }

absl::StatusOr<DeviceBuffer> DeviceBuffer::Allocate(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, std::max<size_t>(bytes, 1));
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error so later calls work
    return absl::ResourceExhaustedError(
        absl::StrFormat("cudaMalloc of %d bytes: out of device memory; choose a smaller size", bytes));
  }
  if (e != cudaSuccess) {
    if (MachineError(e)) return Unavailable(e, "cudaMalloc");
    return CudaError(e, "cudaMalloc", __FILE__, __LINE__);
  }
  DeviceBuffer b;
  b.ptr_.reset(p);
  b.bytes_ = bytes;
  return b;
}

void Stream::Destroy::operator()(cudaStream_t s) const { PERFGATE_CUDA_CHECK(cudaStreamDestroy(s)); }

absl::StatusOr<Stream> Stream::Create() {
  cudaStream_t s = nullptr;
  const cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    if (MachineError(e)) return Unavailable(e, "cudaStreamCreateWithFlags");
    return CudaError(e, "cudaStreamCreateWithFlags", __FILE__, __LINE__);
  }
  Stream stream;
  stream.stream_.reset(s);
  return stream;
}

absl::StatusOr<L2Flush> L2Flush::Create(const DeviceInfo& device) {
  L2Flush f;
  auto buffer = DeviceBuffer::Allocate(std::max<size_t>(2 * device.l2_bytes, 1 << 20));
  if (!buffer.ok()) return buffer.status();
  f.buffer_ = std::move(*buffer);
  return f;
}

absl::Status L2Flush::Flush(cudaStream_t stream) const {
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(buffer_.get(), 0, buffer_.bytes(), stream));
  return absl::OkStatus();
}

void BlockingKernel::FreeHost::operator()(int32_t* p) const { PERFGATE_CUDA_CHECK(cudaFreeHost(p)); }

absl::StatusOr<BlockingKernel> BlockingKernel::Create() {
  void* host = nullptr;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaHostAlloc(&host, 2 * sizeof(int32_t), cudaHostAllocMapped));
  BlockingKernel k;
  k.flags_.reset(static_cast<int32_t*>(host));
  void* device = nullptr;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&device, host, 0));
  k.device_flags_ = static_cast<int32_t*>(device);
  return k;
}

absl::Status BlockingKernel::Block(cudaStream_t stream, double timeout_s) {
  volatile int32_t* flags = flags_.get();
  flags[0] = 0;
  flags[1] = 0;
  BlockStream<<<1, 1, 0, stream>>>(device_flags_, device_flags_ + 1,
                                    static_cast<uint64_t>(timeout_s * 1e9));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

void BlockingKernel::Release() {
  volatile int32_t* flags = flags_.get();
  flags[0] = 1;
}

absl::Status BlockingKernel::CheckReleasedInTime(double timeout_s) const {
  const volatile int32_t* flags = flags_.get();
  if (flags[1] != 0) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "the blocking kernel gave up after %g s before the work behind it was queued; the sample "
        "was discarded (is the host overloaded, or does the case enqueue too many launches?)",
        timeout_s));
  }
  return absl::OkStatus();
}

absl::Status EnqueueSpin(cudaStream_t stream, double seconds, const DeviceInfo& /*device*/) {
  if (seconds <= 0) return absl::OkStatus();
  Spin<<<1, 1, 0, stream>>>(static_cast<uint64_t>(std::llround(seconds * 1e9)));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return absl::OkStatus();
}

namespace {

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  ~EventPair() {
    if (start) PERFGATE_CUDA_CHECK(cudaEventDestroy(start));
    if (stop) PERFGATE_CUDA_CHECK(cudaEventDestroy(stop));
  }
};

template <typename E>
absl::StatusOr<std::shared_ptr<E>> MakeEvents() {
  auto e = std::make_shared<E>();
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e->start));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e->stop));
  return e;
}

}  // namespace

struct ColdSampler::Events : EventPair {};
struct BatchSampler::Events : EventPair {};

namespace {

// Loads the engine's own kernels now: a lazy load inside the blocked region
// could wait on the blocking kernel (see ColdSampler::Prime).
absl::Status LoadEngineKernels() {
  cudaFuncAttributes attributes{};
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, BlockStream));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaFuncGetAttributes(&attributes, Spin));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ColdSampler> ColdSampler::Create(cudaStream_t stream) {
  ColdSampler s;
  s.stream_ = stream;
  auto device = CurrentDevice();
  if (!device.ok()) return device.status();
  s.device_ = *device;
  PERFGATE_RETURN_IF_ERROR(LoadEngineKernels());
  auto events = MakeEvents<Events>();
  if (!events.ok()) return events.status();
  s.events_ = *events;
  auto flush = L2Flush::Create(s.device_);
  if (!flush.ok()) return flush.status();
  s.flush_ = std::make_shared<L2Flush>(std::move(*flush));
  auto blocker = BlockingKernel::Create();
  if (!blocker.ok()) return blocker.status();
  s.blocker_ = std::make_shared<BlockingKernel>(std::move(*blocker));
  return s;
}

absl::Status ColdSampler::Prime(const Work& work) {
  PERFGATE_RETURN_IF_ERROR(work(stream_));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return absl::OkStatus();
}

absl::StatusOr<double> ColdSampler::Sample(const Work& work) {
  PERFGATE_RETURN_IF_ERROR(flush_->Flush(stream_));
  PERFGATE_RETURN_IF_ERROR(blocker_->Block(stream_, kBlockTimeoutS));
  // From here until Release() every error must still release the stream, or
  // the blocking kernel would spin until its timeout.
  absl::Status queued = [&]() -> absl::Status {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_->start, stream_));
    PERFGATE_RETURN_IF_ERROR(work(stream_));
    PERFGATE_RETURN_IF_ERROR(EnqueueSpin(stream_, injected_s_, device_));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_->stop, stream_));
    return absl::OkStatus();
  }();
  blocker_->Release();
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  PERFGATE_RETURN_IF_ERROR(queued);
  PERFGATE_RETURN_IF_ERROR(blocker_->CheckReleasedInTime(kBlockTimeoutS));
  float ms = 0;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, events_->start, events_->stop));
  return static_cast<double>(ms) / 1e3;
}

unsigned BatchIterations(double single_s, double min_sample_s, unsigned max_iterations) {
  if (!(single_s > 0)) return max_iterations;
  const double n = std::ceil(min_sample_s / single_s);
  if (n < 1) return 1;
  if (n > max_iterations) return max_iterations;
  return static_cast<unsigned>(n);
}

absl::StatusOr<BatchSampler> BatchSampler::Create(cudaStream_t stream, double min_sample_s) {
  BatchSampler s;
  s.stream_ = stream;
  s.min_sample_s_ = min_sample_s;
  auto device = CurrentDevice();
  if (!device.ok()) return device.status();
  s.device_ = *device;
  auto events = MakeEvents<Events>();
  if (!events.ok()) return events.status();
  s.events_ = *events;
  return s;
}

absl::StatusOr<double> BatchSampler::Calibrate(const Work& work) {
  constexpr unsigned kMaxIterations = 100000;
  const double saved = injected_s_;
  injected_s_ = 0;
  iterations_ = 1;
  // Grow the batch until one lasts long enough: the first, single launch
  // carries one-off costs (module load, event overhead) that would make a
  // batch sized from it alone too short.
  while (true) {
    absl::StatusOr<double> per = Sample(work);
    if (!per.ok() || *per * iterations_ >= min_sample_s_ || iterations_ >= kMaxIterations) {
      injected_s_ = saved;
      return per;
    }
    iterations_ = std::min(kMaxIterations,
                           std::max(2 * iterations_, BatchIterations(*per, min_sample_s_, kMaxIterations)));
  }
}

absl::StatusOr<double> BatchSampler::Sample(const Work& work) {
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_->start, stream_));
  for (unsigned i = 0; i < iterations_; ++i) PERFGATE_RETURN_IF_ERROR(work(stream_));
  PERFGATE_RETURN_IF_ERROR(EnqueueSpin(stream_, injected_s_ * iterations_, device_));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(events_->stop, stream_));
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(events_->stop));
  float ms = 0;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, events_->start, events_->stop));
  return static_cast<double>(ms) / 1e3 / iterations_;
}

absl::Status MeasureCold(CaseHost& host, ColdSampler& sampler, const Work& work) {
  const double fraction = host.inject_fraction();
  return host.Measure(
      [&]() -> absl::Status {
        sampler.set_injected_seconds(0);
        PERFGATE_RETURN_IF_ERROR(sampler.Prime(work));
        auto t = sampler.Sample(work);
        if (!t.ok()) return t.status();
        sampler.set_injected_seconds(fraction * *t);
        return absl::OkStatus();
      },
      [&] { return sampler.Sample(work); });
}

}  // namespace perfgate::cuda
