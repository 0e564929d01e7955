#include "suites/collectives/ops.h"

#include <cstdlib>

namespace perfgate::suites::collectives {

const char* OpName(Op op) {
  switch (op) {
    case Op::kAllReduce: return "all_reduce";
    case Op::kAllGather: return "all_gather";
    case Op::kReduceScatter: return "reduce_scatter";
    case Op::kBroadcast: return "broadcast";
    case Op::kAllToAll: return "alltoall";
    case Op::kSendRecv: return "sendrecv";
  }
  std::abort();
}

const char* DTypeName(DType t) { return t == DType::kFloat32 ? "float32" : "int32"; }

bool ParseDType(const std::string& name, DType* t) {
  if (name == "float32") {
    *t = DType::kFloat32;
  } else if (name == "int32") {
    *t = DType::kInt32;
  } else {
    return false;
  }
  return true;
}

size_t DTypeSize(DType) { return 4; }

Layout LayoutOf(Op op, size_t bytes, int nranks, DType dtype) {
  const size_t elt = DTypeSize(dtype);
  const size_t count = bytes / elt;
  const size_t n = static_cast<size_t>(nranks);
  Layout l;
  switch (op) {
    case Op::kAllReduce:
    case Op::kBroadcast:
    case Op::kSendRecv:
      l.send_count = l.recv_count = l.chunk = count;
      break;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: {
      // nccl-tests: (count / nranks) & -(16 / eltSize), whole 16-byte blocks.
      const size_t align = 16 / elt;
      l.chunk = (count / n) / align * align;
      l.send_count = op == Op::kAllGather ? l.chunk : l.chunk * n;
      l.recv_count = op == Op::kReduceScatter ? l.chunk : l.chunk * n;
      l.algorithm_bytes = static_cast<double>(l.chunk * n * elt);
      return l;
    }
  }
  l.algorithm_bytes = static_cast<double>(count * elt);
  return l;
}

double BusFactor(Op op, int nranks) {
  const double n = nranks;
  switch (op) {
    case Op::kAllReduce: return 2 * (n - 1) / n;
    case Op::kAllGather:
    case Op::kReduceScatter:
    case Op::kAllToAll: return (n - 1) / n;
    case Op::kBroadcast:
    case Op::kSendRecv: return 1;
  }
  std::abort();
}

double AlgorithmBandwidth(double algorithm_bytes, double seconds) {
  return algorithm_bytes / seconds / 1e9;
}

double BusBandwidth(Op op, int nranks, double algorithm_bytes, double seconds) {
  return AlgorithmBandwidth(algorithm_bytes, seconds) * BusFactor(op, nranks);
}

int32_t ExpectedValue(Op op, int nranks, int rank, size_t index, const Layout& layout) {
  switch (op) {
    case Op::kAllReduce: {
      int32_t sum = 0;
      for (int r = 0; r < nranks; ++r) sum += InputValue(r, index);
      return sum;
    }
    case Op::kAllGather:
      return InputValue(static_cast<int>(index / layout.chunk), index % layout.chunk);
    case Op::kReduceScatter: {
      int32_t sum = 0;
      for (int r = 0; r < nranks; ++r) {
        sum += InputValue(r, static_cast<size_t>(rank) * layout.chunk + index);
      }
      return sum;
    }
    case Op::kBroadcast: return InputValue(0, index);
    case Op::kAllToAll:
      // Block j of the result is block `rank` of rank j's send buffer.
      return InputValue(static_cast<int>(index / layout.chunk),
                        static_cast<size_t>(rank) * layout.chunk + index % layout.chunk);
    case Op::kSendRecv: return InputValue((rank - 1 + nranks) % nranks, index);
  }
  std::abort();
}

size_t ResultCount(Op op, const Layout& layout) {
  return op == Op::kReduceScatter ? layout.chunk : layout.recv_count;
}

bool HasInPlace(Op op) { return op != Op::kAllToAll && op != Op::kSendRecv; }

}  // namespace perfgate::suites::collectives
