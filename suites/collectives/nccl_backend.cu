// The NCCL backend: device buffers from cudaMalloc filled by a kernel with the
// exact pattern of InputValue(), operations enqueued on each communicator's
// stream between two CUDA events, results copied back and checked on the
// host. Every CUDA and NCCL return code is checked; an error names the call,
// the file and the line. libnccl is loaded with dlopen on first use, so the
// agent starts (and the backend skips with the reason) where NCCL is absent.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "suites/collectives/nccl_backend.h"

namespace perfgate::suites::collectives::nccl {
namespace {

Error Where(const char* file, int line, const char* call, const char* what) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s:%d: %s failed: %s", file, line, call, what);
  return Error{buf, false};
}

#define PERFGATE_CUDA_TRY(call)                                                   \
  do {                                                                            \
    const cudaError_t perfgate_e = (call);                                        \
    if (perfgate_e != cudaSuccess) {                                              \
      return Where(__FILE__, __LINE__, #call, cudaGetErrorString(perfgate_e));    \
    }                                                                             \
  } while (0)

// The NCCL entry points this backend calls, resolved from libnccl at run time.
struct NcclApi {
  decltype(&::ncclGetErrorString) GetErrorString;
  decltype(&::ncclGetUniqueId) GetUniqueId;
  decltype(&::ncclCommInitRank) CommInitRank;
  decltype(&::ncclCommInitAll) CommInitAll;
  decltype(&::ncclCommDestroy) CommDestroy;
  decltype(&::ncclGroupStart) GroupStart;
  decltype(&::ncclGroupEnd) GroupEnd;
  decltype(&::ncclAllReduce) AllReduce;
  decltype(&::ncclAllGather) AllGather;
  decltype(&::ncclReduceScatter) ReduceScatter;
  decltype(&::ncclBroadcast) Broadcast;
  decltype(&::ncclSend) Send;
  decltype(&::ncclRecv) Recv;
};

// The loaded API, or null with the reason in *why.
const NcclApi* Nccl(std::string* why) {
  static std::string error;
  static const NcclApi* api = []() -> const NcclApi* {
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      error = std::string("cannot load NCCL (libnccl.so.2; set LD_LIBRARY_PATH): ") + dlerror();
      return nullptr;
    }
    static NcclApi a;
    bool ok = true;
    auto get = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (fn == nullptr) {
        ok = false;
        error = std::string("libnccl lacks ") + name;
      }
    };
    get(a.GetErrorString, "ncclGetErrorString");
    get(a.GetUniqueId, "ncclGetUniqueId");
    get(a.CommInitRank, "ncclCommInitRank");
    get(a.CommInitAll, "ncclCommInitAll");
    get(a.CommDestroy, "ncclCommDestroy");
    get(a.GroupStart, "ncclGroupStart");
    get(a.GroupEnd, "ncclGroupEnd");
    get(a.AllReduce, "ncclAllReduce");
    get(a.AllGather, "ncclAllGather");
    get(a.ReduceScatter, "ncclReduceScatter");
    get(a.Broadcast, "ncclBroadcast");
    get(a.Send, "ncclSend");
    get(a.Recv, "ncclRecv");
    return ok ? &a : nullptr;
  }();
  if (api == nullptr && why != nullptr) *why = error;
  return api;
}

// Only reached after Nccl() succeeded (VisibleDevices checks it first).
const NcclApi& Api() { return *Nccl(nullptr); }

#define PERFGATE_NCCL_TRY(call)                                                   \
  do {                                                                            \
    const ncclResult_t perfgate_r = (call);                                       \
    if (perfgate_r != ncclSuccess) {                                              \
      return Where(__FILE__, __LINE__, #call, Api().GetErrorString(perfgate_r));  \
    }                                                                             \
  } while (0)

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
  std::vector<Device> devices;
  int nranks = 0;
  Op op = Op::kAllReduce;
  DType dtype = DType::kFloat32;
  size_t bytes = 0;
  bool in_place = false;
  Layout layout;

  ncclDataType_t Type() const { return dtype == DType::kInt32 ? ncclInt32 : ncclFloat32; }
  size_t Elt() const { return DTypeSize(dtype); }

  Error Setup(Device& d) {
    PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
    PERFGATE_CUDA_TRY(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking));
    PERFGATE_CUDA_TRY(cudaEventCreate(&d.start));
    PERFGATE_CUDA_TRY(cudaEventCreate(&d.stop));
    return Error{};
  }

  Error FreeBuffers() {
    for (Device& d : devices) {
      PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
      if (d.send != nullptr) PERFGATE_CUDA_TRY(cudaFree(d.send));
      if (d.recv != nullptr) PERFGATE_CUDA_TRY(cudaFree(d.recv));
      d.send = d.recv = nullptr;
    }
    return Error{};
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

  Error Enqueue(const Device& d) {
    const size_t elt = Elt();
    switch (op) {
      case Op::kAllReduce:
        PERFGATE_NCCL_TRY(Api().AllReduce(Input(d), Output(d), layout.recv_count, Type(), ncclSum,
                                        d.comm, d.stream));
        break;
      case Op::kAllGather:
        PERFGATE_NCCL_TRY(Api().AllGather(Input(d), Output(d), layout.chunk, Type(), d.comm, d.stream));
        break;
      case Op::kReduceScatter:
        PERFGATE_NCCL_TRY(Api().ReduceScatter(Input(d), Output(d), layout.chunk, Type(), ncclSum,
                                            d.comm, d.stream));
        break;
      case Op::kBroadcast:
        PERFGATE_NCCL_TRY(Api().Broadcast(Input(d), Output(d), layout.recv_count, Type(), 0, d.comm,
                                        d.stream));
        break;
      case Op::kAllToAll:
        for (int peer = 0; peer < nranks; ++peer) {
          PERFGATE_NCCL_TRY(Api().Send(d.send + size_t(peer) * layout.chunk * elt, layout.chunk,
                                     Type(), peer, d.comm, d.stream));
          PERFGATE_NCCL_TRY(Api().Recv(d.recv + size_t(peer) * layout.chunk * elt, layout.chunk,
                                     Type(), peer, d.comm, d.stream));
        }
        break;
      case Op::kSendRecv:
        PERFGATE_NCCL_TRY(Api().Send(d.send, layout.send_count, Type(), (d.rank + 1) % nranks,
                                   d.comm, d.stream));
        PERFGATE_NCCL_TRY(Api().Recv(d.recv, layout.recv_count, Type(),
                                   (d.rank - 1 + nranks) % nranks, d.comm, d.stream));
        break;
    }
    return Error{};
  }

  // One operation on every local device. The group makes one process's
  // several devices (and alltoall's and sendrecv's point-to-point pairs)
  // launch together instead of deadlocking on each other.
  Error RunOnce() {
    PERFGATE_NCCL_TRY(Api().GroupStart());
    for (const Device& d : devices) {
      Error e = Enqueue(d);
      if (!e.ok()) {
        Api().GroupEnd();
        return e;
      }
    }
    PERFGATE_NCCL_TRY(Api().GroupEnd());
    return Error{};
  }
};

int VisibleDevices(Error* error) {
  std::string why;
  if (Nccl(&why) == nullptr) {
    *error = Error{why, true};
    return 0;
  }
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    *error = Error{std::string("no CUDA device: ") + cudaGetErrorString(e), true};
    return 0;
  }
  if (n == 0) *error = Error{"no CUDA device is visible", true};
  return n;
}

Error NewUniqueId(std::vector<char>* id) {
  std::string why;
  if (Nccl(&why) == nullptr) return Error{why, true};
  ncclUniqueId uid;
  PERFGATE_NCCL_TRY(Api().GetUniqueId(&uid));
  id->assign(uid.internal, uid.internal + sizeof(uid.internal));
  return Error{};
}

Communicators::Communicators(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Communicators::~Communicators() {
  // Teardown errors have nowhere to go; the process is ending the backend.
  impl_->FreeBuffers();
  for (Device& d : impl_->devices) {
    cudaSetDevice(d.device);
    if (d.comm != nullptr) Api().CommDestroy(d.comm);
    if (d.start != nullptr) cudaEventDestroy(d.start);
    if (d.stop != nullptr) cudaEventDestroy(d.stop);
    if (d.stream != nullptr) cudaStreamDestroy(d.stream);
  }
}

Error Communicators::CreateLocal(int ndev, std::unique_ptr<Communicators>* out) {
  std::string why;
  if (Nccl(&why) == nullptr) return Error{why, true};
  auto impl = std::make_unique<Impl>();
  impl->nranks = ndev;
  std::vector<int> list(ndev);
  std::vector<ncclComm_t> comms(ndev);
  for (int i = 0; i < ndev; ++i) list[i] = i;
  PERFGATE_NCCL_TRY(Api().CommInitAll(comms.data(), ndev, list.data()));
  for (int i = 0; i < ndev; ++i) {
    Device d;
    d.device = i;
    d.rank = i;
    d.comm = comms[i];
    impl->devices.push_back(d);
  }
  out->reset(new Communicators(std::move(impl)));
  for (Device& d : (*out)->impl_->devices) {
    Error e = (*out)->impl_->Setup(d);
    if (!e.ok()) return e;
  }
  return Error{};
}

Error Communicators::CreateRank(int rank, int nranks, int device, const std::vector<char>& id,
                                std::unique_ptr<Communicators>* out) {
  std::string why;
  if (Nccl(&why) == nullptr) return Error{why, true};
  ncclUniqueId uid;
  if (id.size() != sizeof(uid.internal)) {
    return Error{"the NCCL unique id from the rendezvous store has the wrong size", false};
  }
  std::memcpy(uid.internal, id.data(), sizeof(uid.internal));
  auto impl = std::make_unique<Impl>();
  impl->nranks = nranks;
  Device d;
  d.device = device;
  d.rank = rank;
  PERFGATE_CUDA_TRY(cudaSetDevice(device));
  PERFGATE_NCCL_TRY(Api().CommInitRank(&d.comm, nranks, uid, rank));
  impl->devices.push_back(d);
  out->reset(new Communicators(std::move(impl)));
  return (*out)->impl_->Setup((*out)->impl_->devices.front());
}

int Communicators::ranks() const { return impl_->nranks; }

Error Communicators::Prepare(Op op, DType dtype, size_t bytes, bool in_place) {
  Impl& m = *impl_;
  Error e = m.FreeBuffers();
  if (!e.ok()) return e;
  m.op = op;
  m.dtype = dtype;
  m.bytes = bytes;
  m.in_place = in_place;
  m.layout = LayoutOf(op, bytes, m.nranks, dtype);
  for (Device& d : m.devices) {
    PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
    PERFGATE_CUDA_TRY(cudaMalloc(&d.send, std::max<size_t>(m.layout.send_count * m.Elt(), 16)));
    PERFGATE_CUDA_TRY(cudaMalloc(&d.recv, std::max<size_t>(m.layout.recv_count * m.Elt(), 16)));
  }
  return Error{};
}

Error Communicators::Fill() {
  Impl& m = *impl_;
  const size_t elt = m.Elt();
  for (Device& d : m.devices) {
    PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
    PERFGATE_CUDA_TRY(cudaMemsetAsync(d.recv, 0, m.layout.recv_count * elt, d.stream));
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
    PERFGATE_CUDA_TRY(cudaGetLastError());
  }
  for (Device& d : m.devices) {
    PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
    PERFGATE_CUDA_TRY(cudaStreamSynchronize(d.stream));
  }
  return Error{};
}

Error Communicators::Time(int iters, double* seconds) {
  Impl& m = *impl_;
  for (Device& d : m.devices) {
    PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
    PERFGATE_CUDA_TRY(cudaStreamSynchronize(d.stream));
    PERFGATE_CUDA_TRY(cudaEventRecord(d.start, d.stream));
  }
  for (int i = 0; i < iters; ++i) {
    Error e = m.RunOnce();
    if (!e.ok()) return e;
  }
  float longest_ms = 0;
  for (Device& d : m.devices) {
    PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
    PERFGATE_CUDA_TRY(cudaEventRecord(d.stop, d.stream));
  }
  for (Device& d : m.devices) {
    PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
    PERFGATE_CUDA_TRY(cudaEventSynchronize(d.stop));
    float ms = 0;
    PERFGATE_CUDA_TRY(cudaEventElapsedTime(&ms, d.start, d.stop));
    longest_ms = std::max(longest_ms, ms);
  }
  *seconds = longest_ms / 1e3;
  return Error{};
}

Error Communicators::Check(int corrupt_rank, std::string* wrong) {
  Impl& m = *impl_;
  wrong->clear();
  const size_t count = ResultCount(m.op, m.layout);
  for (Device& d : m.devices) {
    PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
    PERFGATE_CUDA_TRY(cudaStreamSynchronize(d.stream));
    // Both types are 4 bytes; read as the case's type.
    std::vector<int32_t> host(count);
    PERFGATE_CUDA_TRY(cudaMemcpy(host.data(), m.Output(d), count * 4, cudaMemcpyDeviceToHost));
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
        *wrong = buf;
        return Error{};
      }
    }
  }
  return Error{};
}

Error Communicators::AllReduceFloatSum(float* device_data, size_t count, void* stream) {
  Impl& m = *impl_;
  if (m.devices.size() != 1) {
    return Error{"AllReduceFloatSum needs a communicator driving exactly one device (this one drives " +
                     std::to_string(m.devices.size()) + ")",
                 false};
  }
  const Device& d = m.devices.front();
  PERFGATE_CUDA_TRY(cudaSetDevice(d.device));
  PERFGATE_NCCL_TRY(Api().AllReduce(device_data, device_data, count, ncclFloat, ncclSum, d.comm,
                                    static_cast<cudaStream_t>(stream)));
  return Error{};
}

}  // namespace perfgate::suites::collectives::nccl
