// The GPU timing engine (docs/measurement.md): device buffers, the L2 flush,
// nvbench's blocking kernel, and the cold and batch samplers that return
// seconds for State::MeasureSamples. C++17, so .cu files include it.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "suites/cuda/case_host.h"

namespace perfgate::cuda {

/// OK when the CUDA runtime reports a device; UNAVAILABLE with the reason
/// of VisibleDevices otherwise (no driver, no device). No context is created.
absl::Status DeviceAvailable();

/// The compute capability of device 0 (cudaDeviceGetAttribute, no context);
/// UNAVAILABLE when there is no device.
absl::StatusOr<int> ComputeCapability();

/// What the samplers and cases need to know about the current device.
struct DeviceInfo {
  int ordinal = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t l2_bytes = 0;
  double sm_clock_khz = 0;  // peak SM clock (cudaDevAttrClockRate); under load it runs lower
};

/// The current device's properties; UNAVAILABLE without a device.
absl::StatusOr<DeviceInfo> CurrentDevice();

/// Device memory, freed when destroyed; move-only.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// cudaMalloc of `bytes`; RESOURCE_EXHAUSTED naming the size when it fails.
  static absl::StatusOr<DeviceBuffer> Allocate(size_t bytes);
  /// The device address; null for a default-constructed buffer.
  void* get() const { return ptr_.get(); }
  /// The device address as a T*.
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_.get()); }
  /// The size asked for.
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, Free> ptr_;
  size_t bytes_ = 0;
};

/// A non-blocking CUDA stream, destroyed with its owner.
class Stream {
 public:
  /// cudaStreamCreateWithFlags(cudaStreamNonBlocking).
  static absl::StatusOr<Stream> Create();
  /// The stream handle, valid while this object lives.
  cudaStream_t get() const { return stream_.get(); }

 private:
  struct Destroy {
    void operator()(cudaStream_t s) const;
  };
  std::unique_ptr<CUstream_st, Destroy> stream_;
};

/// The work a sampler times: enqueues one iteration on the stream and
/// returns the first error of any launch or library call.
using Work = std::function<absl::Status(cudaStream_t)>;

/// Evicts the L2 cache by writing a buffer of twice its size on the stream,
/// so the next work reads its operands from HBM.
class L2Flush {
 public:
  /// Allocates the buffer: twice the device's L2, at least 1 MiB.
  static absl::StatusOr<L2Flush> Create(const DeviceInfo& device);
  /// Enqueues the write on `stream`.
  absl::Status Flush(cudaStream_t stream) const;

 private:
  DeviceBuffer buffer_;
};

/// nvbench's blocking kernel: one thread spinning on a mapped host flag
/// holds the stream while events and work are queued behind it, so launch
/// latency stays out of the timed region. It gives up after a timeout so a
/// stream that cannot be released never hangs the agent.
class BlockingKernel {
 public:
  /// Allocates the mapped host flags.
  static absl::StatusOr<BlockingKernel> Create();
  /// Enqueues the spinning thread on `stream`.
  absl::Status Block(cudaStream_t stream, double timeout_s);
  /// Lets the spinning thread finish.
  void Release();
  /// After the stream synchronised: DEADLINE_EXCEEDED when the kernel gave
  /// up before it was released (the timed region is then worthless).
  absl::Status CheckReleasedInTime(double timeout_s) const;

 private:
  struct FreeHost {
    void operator()(int32_t* p) const;
  };
  std::unique_ptr<int32_t, FreeHost> flags_;  // [0] release, [1] timed out
  int32_t* device_flags_ = nullptr;
};

/// Enqueues one thread spinning for `seconds` of wall time (%globaltimer,
/// whatever the SM clock): the injected slowdown, inside the timed region.
absl::Status EnqueueSpin(cudaStream_t stream, double seconds, const DeviceInfo& device);

/// Cold samples: flush L2, block the stream, record the start event, enqueue
/// the work (and the injected spin), record the stop event, release,
/// synchronise; the sample is the event time of one iteration.
class ColdSampler {
 public:
  /// A sampler on `stream` of the current device, with its flush buffer,
  /// blocking kernel and events.
  static absl::StatusOr<ColdSampler> Create(cudaStream_t stream);
  /// Runs `work` once on the stream without the blocking kernel and waits.
  /// Kernels load lazily on first launch (the default since CUDA 12.2), and
  /// a load may synchronise the context: inside Sample() it would wait on the
  /// spinning kernel until the timeout. Called before the first Sample().
  absl::Status Prime(const Work& work);
  /// Times one iteration of `work` from a cold L2.
  absl::StatusOr<double> Sample(const Work& work);
  /// Spin this long inside every later sample (the injected slowdown).
  void set_injected_seconds(double s) { injected_s_ = s; }
  /// The device the sampler runs on.
  const DeviceInfo& device() const { return device_; }
  /// How long the blocking kernel waits before giving up.
  static constexpr double kBlockTimeoutS = 10.0;

 private:
  struct Events;
  cudaStream_t stream_ = nullptr;
  DeviceInfo device_;
  std::shared_ptr<Events> events_;
  std::shared_ptr<L2Flush> flush_;
  std::shared_ptr<BlockingKernel> blocker_;
  double injected_s_ = 0;
};

/// Hot (batch) samples: N back-to-back iterations between one event pair,
/// N sized so a sample lasts at least `min_sample_s`; returns time per
/// iteration. For work short enough that launch gaps would dominate.
class BatchSampler {
 public:
  /// A sampler on `stream` whose batches last at least `min_sample_s`.
  static absl::StatusOr<BatchSampler> Create(cudaStream_t stream, double min_sample_s = 5e-4);
  /// Sizes N, growing it until a batch lasts min_sample_s; returns the
  /// time per iteration of the last batch.
  absl::StatusOr<double> Calibrate(const Work& work);
  /// Times N iterations; returns seconds per iteration.
  absl::StatusOr<double> Sample(const Work& work);
  /// Spin this long per iteration inside every later sample.
  void set_injected_seconds(double s) { injected_s_ = s; }
  /// N, the launches per sample (1 until calibrated).
  unsigned iterations() const { return iterations_; }
  /// The device the sampler runs on.
  const DeviceInfo& device() const { return device_; }

 private:
  struct Events;
  cudaStream_t stream_ = nullptr;
  DeviceInfo device_;
  std::shared_ptr<Events> events_;
  double min_sample_s_ = 5e-4;
  unsigned iterations_ = 1;
  double injected_s_ = 0;
};

/// The batch size that makes `iterations × single_s` reach `min_sample_s`,
/// between 1 and `max_iterations`.
unsigned BatchIterations(double single_s, double min_sample_s, unsigned max_iterations = 100000);

/// Measures `work` cold under the host's sampling loop. The warm-up primes
/// the sampler with the work, runs it once through the sampler and, when the host injects a slowdown,
/// sets the spin to inject_fraction × that warm-up time.
absl::Status MeasureCold(CaseHost& host, ColdSampler& sampler, const Work& work);

}  // namespace perfgate::cuda
