// The NCCL backend: device buffers from cudaMalloc filled by a kernel with the
// exact pattern of InputValue(), operations enqueued on each communicator's
// stream between two CUDA events, results copied back and checked on the
// host. Every CUDA and NCCL return code is checked (suites/cuda/check.h,
// nccl_check.h): an error names the call, the file and the line. libnccl is
// loaded with dlopen on first use (suites/cuda/nccl.h), so the agent starts
// (and the backend skips with the reason) where NCCL is absent.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "suites/collectives/nccl_backend.h"
#include "suites/cuda/check.h"
#include "suites/cuda/nccl.h"
#include "suites/cuda/nccl_check.h"

namespace perfgate::suites::collectives::nccl {
namespace {

template <typename T>
__global__ void FillKernel(T* data, size_t n, int rank) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] = static_cast<T>(InputValue(rank, i));
  }
}

// One device this process drives: its rank, communicator, stream, events and
// buffers of the current case.
struct Device {
  int device = 0;
  int rank = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  char* send = nullptr;
  char* recv = nullptr;
};

}  // namespace

struct Communicators::Impl {
  const cuda::Nccl* api = nullptr;
  std::vector<Device> devices;
  int nranks = 0;
  Op op = Op::kAllReduce;
  DType dtype = DType::kFloat32;
  size_t bytes = 0;
  bool in_place = false;
  Layout layout;

  ncclDataType_t Type() const { return dtype == DType::kInt32 ? ncclInt32 : ncclFloat32; }
  size_t Elt() const { return DTypeSize(dtype); }

  absl::Status Setup(Device& d) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&d.start));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventCreate(&d.stop));
    return absl::OkStatus();
  }

  absl::Status FreeBuffers() {
    for (Device& d : devices) {
      PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
      if (d.send != nullptr) PERFGATE_CUDA_RETURN_IF_ERROR(cudaFree(d.send));
      if (d.recv != nullptr) PERFGATE_CUDA_RETURN_IF_ERROR(cudaFree(d.recv));
      d.send = d.recv = nullptr;
    }
    return absl::OkStatus();
  }

  // The buffer an in-place operation reads from and the one its result
  // lands in, at nccl-tests' offsets.
  char* Input(const Device& d) const {
    if (!in_place) return d.send;
    switch (op) {
      case Op::kAllGather: return d.recv + size_t(d.rank) * layout.chunk * Elt();
      case Op::kReduceScatter: return d.send;
      default: return d.recv;
    }
  }
  char* Output(const Device& d) const {
    if (in_place && op == Op::kReduceScatter) return d.send + size_t(d.rank) * layout.chunk * Elt();
    return d.recv;
  }

  absl::Status Enqueue(const Device& d) {
    const size_t elt = Elt();
    switch (op) {
      case Op::kAllReduce:
        PERFGATE_NCCL_RETURN_IF_ERROR(api->AllReduce(Input(d), Output(d), layout.recv_count, Type(), ncclSum,
                                                     d.comm, d.stream));
        break;
      case Op::kAllGather:
        PERFGATE_NCCL_RETURN_IF_ERROR(
            api->AllGather(Input(d), Output(d), layout.chunk, Type(), d.comm, d.stream));
        break;
      case Op::kReduceScatter:
        PERFGATE_NCCL_RETURN_IF_ERROR(api->ReduceScatter(Input(d), Output(d), layout.chunk, Type(), ncclSum,
                                                         d.comm, d.stream));
        break;
      case Op::kBroadcast:
        PERFGATE_NCCL_RETURN_IF_ERROR(
            api->Broadcast(Input(d), Output(d), layout.recv_count, Type(), 0, d.comm, d.stream));
        break;
      case Op::kAllToAll:
        for (int peer = 0; peer < nranks; ++peer) {
          PERFGATE_NCCL_RETURN_IF_ERROR(api->Send(d.send + size_t(peer) * layout.chunk * elt, layout.chunk,
                                                  Type(), peer, d.comm, d.stream));
          PERFGATE_NCCL_RETURN_IF_ERROR(api->Recv(d.recv + size_t(peer) * layout.chunk * elt, layout.chunk,
                                                  Type(), peer, d.comm, d.stream));
        }
        break;
      case Op::kSendRecv:
        PERFGATE_NCCL_RETURN_IF_ERROR(
            api->Send(d.send, layout.send_count, Type(), (d.rank + 1) % nranks, d.comm, d.stream));
        PERFGATE_NCCL_RETURN_IF_ERROR(api->Recv(d.recv, layout.recv_count, Type(),
                                                (d.rank - 1 + nranks) % nranks, d.comm, d.stream));
        break;
    }
    return absl::OkStatus();
  }

  // One operation on every local device. The group makes one process's
  // several devices (and alltoall's and sendrecv's point-to-point pairs)
  // launch together instead of deadlocking on each other.
  absl::Status RunOnce() {
    PERFGATE_NCCL_RETURN_IF_ERROR(api->GroupStart());
    for (const Device& d : devices) {
      if (absl::Status s = Enqueue(d); !s.ok()) {
        api->GroupEnd();
        return s;
      }
    }
    PERFGATE_NCCL_RETURN_IF_ERROR(api->GroupEnd());
    return absl::OkStatus();
  }
};

absl::Status Available() { return cuda::LoadNccl().status(); }

absl::StatusOr<std::vector<char>> NewUniqueId() {
  absl::StatusOr<const cuda::Nccl*> api = cuda::LoadNccl();
  if (!api.ok()) return api.status();
  ncclUniqueId uid;
  PERFGATE_NCCL_RETURN_IF_ERROR((*api)->GetUniqueId(&uid));
  return std::vector<char>(uid.internal, uid.internal + sizeof(uid.internal));
}

Communicators::Communicators(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Communicators::~Communicators() {
  // Teardown errors have nowhere to go; the process is ending the backend.
  impl_->FreeBuffers().IgnoreError();
  for (Device& d : impl_->devices) {
    cudaSetDevice(d.device);
    if (d.comm != nullptr) impl_->api->CommDestroy(d.comm);
    if (d.start != nullptr) cudaEventDestroy(d.start);
    if (d.stop != nullptr) cudaEventDestroy(d.stop);
    if (d.stream != nullptr) cudaStreamDestroy(d.stream);
  }
}

absl::StatusOr<std::unique_ptr<Communicators>> Communicators::CreateLocal(int ndev) {
  absl::StatusOr<const cuda::Nccl*> api = cuda::LoadNccl();
  if (!api.ok()) return api.status();
  auto impl = std::make_unique<Impl>();
  impl->api = *api;
  impl->nranks = ndev;
  std::vector<int> list(ndev);
  std::vector<ncclComm_t> comms(ndev);
  for (int i = 0; i < ndev; ++i) list[i] = i;
  PERFGATE_NCCL_RETURN_IF_ERROR((*api)->CommInitAll(comms.data(), ndev, list.data()));
  for (int i = 0; i < ndev; ++i) {
    Device d;
    d.device = i;
    d.rank = i;
    d.comm = comms[i];
    impl->devices.push_back(d);
  }
  // Owned before Setup, so a failure there still destroys the communicators.
  std::unique_ptr<Communicators> made(new Communicators(std::move(impl)));
  for (Device& d : made->impl_->devices) PERFGATE_RETURN_IF_ERROR(made->impl_->Setup(d));
  return made;
}

absl::StatusOr<std::unique_ptr<Communicators>> Communicators::CreateRank(int rank, int nranks, int device,
                                                                         const std::vector<char>& id) {
  absl::StatusOr<const cuda::Nccl*> api = cuda::LoadNccl();
  if (!api.ok()) return api.status();
  ncclUniqueId uid;
  if (id.size() != sizeof(uid.internal)) {
    return absl::InternalError("the NCCL unique id from the rendezvous store has the wrong size");
  }
  std::memcpy(uid.internal, id.data(), sizeof(uid.internal));
  auto impl = std::make_unique<Impl>();
  impl->api = *api;
  impl->nranks = nranks;
  Device d;
  d.device = device;
  d.rank = rank;
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  PERFGATE_NCCL_RETURN_IF_ERROR((*api)->CommInitRank(&d.comm, nranks, uid, rank));
  impl->devices.push_back(d);
  std::unique_ptr<Communicators> made(new Communicators(std::move(impl)));
  PERFGATE_RETURN_IF_ERROR(made->impl_->Setup(made->impl_->devices.front()));
  return made;
}

int Communicators::ranks() const { return impl_->nranks; }

absl::Status Communicators::Prepare(Op op, DType dtype, size_t bytes, bool in_place) {
  Impl& m = *impl_;
  PERFGATE_RETURN_IF_ERROR(m.FreeBuffers());
  m.op = op;
  m.dtype = dtype;
  m.bytes = bytes;
  m.in_place = in_place;
  m.layout = LayoutOf(op, bytes, m.nranks, dtype);
  for (Device& d : m.devices) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMalloc(&d.send, std::max<size_t>(m.layout.send_count * m.Elt(), 16)));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMalloc(&d.recv, std::max<size_t>(m.layout.recv_count * m.Elt(), 16)));
  }
  return absl::OkStatus();
}

absl::Status Communicators::Fill() {
  Impl& m = *impl_;
  const size_t elt = m.Elt();
  for (Device& d : m.devices) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(d.recv, 0, m.layout.recv_count * elt, d.stream));
    // In place, the input is written where the operation reads it.
    char* in = m.Input(d);
    const size_t count = m.in_place && m.op == Op::kAllGather ? m.layout.chunk : m.layout.send_count;
    if (count == 0) continue;
    const unsigned blocks = static_cast<unsigned>(std::min<size_t>((count + 255) / 256, 4096));
    if (m.dtype == DType::kInt32) {
      FillKernel<int32_t><<<blocks, 256, 0, d.stream>>>(reinterpret_cast<int32_t*>(in), count, d.rank);
    } else {
      FillKernel<float><<<blocks, 256, 0, d.stream>>>(reinterpret_cast<float*>(in), count, d.rank);
    }
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  }
  for (Device& d : m.devices) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(d.stream));
  }
  return absl::OkStatus();
}

absl::StatusOr<double> Communicators::Time(int iters) {
  Impl& m = *impl_;
  for (Device& d : m.devices) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(d.stream));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(d.start, d.stream));
  }
  for (int i = 0; i < iters; ++i) PERFGATE_RETURN_IF_ERROR(m.RunOnce());
  float longest_ms = 0;
  for (Device& d : m.devices) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventRecord(d.stop, d.stream));
  }
  for (Device& d : m.devices) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(d.stop));
    float ms = 0;
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, d.start, d.stop));
    longest_ms = std::max(longest_ms, ms);
  }
  return longest_ms / 1e3;
}

absl::StatusOr<std::string> Communicators::Check(int corrupt_rank) {
  Impl& m = *impl_;
  const size_t count = ResultCount(m.op, m.layout);
  for (Device& d : m.devices) {
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(d.stream));
    // Both types are 4 bytes; read as the case's type.
    std::vector<int32_t> host(count);
    PERFGATE_CUDA_RETURN_IF_ERROR(cudaMemcpy(host.data(), m.Output(d), count * 4, cudaMemcpyDeviceToHost));
    if (d.rank == corrupt_rank && count > 0) {
      if (m.dtype == DType::kInt32) {
        host[count / 2] += 1;
      } else {
        float f;
        std::memcpy(&f, &host[count / 2], 4);
        f += 1;
        std::memcpy(&host[count / 2], &f, 4);
      }
    }
    for (size_t i = 0; i < count; ++i) {
      const int32_t want = ExpectedValue(m.op, m.nranks, d.rank, i, m.layout);
      double got;
      if (m.dtype == DType::kInt32) {
        got = host[i];
      } else {
        float f;
        std::memcpy(&f, &host[i], 4);
        got = f;
      }
      if (got != static_cast<double>(want)) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "%s: %zu B, rank %d: element %zu is %g, expected %d",
                      OpName(m.op), m.bytes, d.rank, i, got, want);
        return std::string(buf);
      }
    }
  }
  return std::string();
}

absl::Status Communicators::AllReduceFloatSum(float* device_data, size_t count, void* stream) {
  Impl& m = *impl_;
  if (m.devices.size() != 1) {
    return absl::InternalError(
        absl::StrCat("AllReduceFloatSum needs a communicator driving exactly one device (this one drives ",
                     m.devices.size(), ")"));
  }
  const Device& d = m.devices.front();
  PERFGATE_CUDA_RETURN_IF_ERROR(cudaSetDevice(d.device));
  PERFGATE_NCCL_RETURN_IF_ERROR(m.api->AllReduce(device_data, device_data, count, ncclFloat, ncclSum, d.comm,
                                                 static_cast<cudaStream_t>(stream)));
  return absl::OkStatus();
}

}  // namespace perfgate::suites::collectives::nccl
