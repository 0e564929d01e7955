// What each collective moves and what it must produce, as pure functions: the
// size S and bus factor nccl-tests reports, the per-rank element counts, the
// exact input pattern and the expected output. C++17 and free of the suite
// headers, so the NCCL translation unit (nvcc, C++17) shares them with the
// Gloo backend and both check results against the same expectations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "suites/host_device.h"

namespace perfgate::suites::collectives {

/// The operations the suite measures.
enum class Op { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll, kSendRecv };

/// Element types; both hold the exact small integers of InputValue().
enum class DType { kFloat32, kInt32 };

/// Every operation, in the order the suite registers them.
inline constexpr Op kAllOps[] = {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter,
                                 Op::kBroadcast, Op::kAllToAll,  Op::kSendRecv};

/// "all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall", "sendrecv".
const char* OpName(Op op);
/// "float32" or "int32".
const char* DTypeName(DType t);
/// The inverse of DTypeName; false for an unknown name.
bool ParseDType(const std::string& name, DType* t);
/// Bytes per element (4 for both types).
size_t DTypeSize(DType t);

/// Buffer shapes of one operation on one rank, in elements, as nccl-tests
/// derives them from the requested size (its *GetCollByteCount functions).
struct Layout {
  size_t send_count = 0;   // elements in the send buffer
  size_t recv_count = 0;   // elements in the receive buffer
  size_t chunk = 0;        // per-rank block (all_gather, reduce_scatter, alltoall); else = count
  double algorithm_bytes = 0;  // S, the size algbw divides by time
};

/// The layout of `op` for a requested size of `bytes` over `nranks` ranks.
/// all_reduce, broadcast, sendrecv: count = bytes / element size.
/// all_gather, reduce_scatter, alltoall: the per-rank block is count / nranks
/// rounded down to a multiple of 16 bytes, and S = block x nranks x element
/// size (the whole gathered, scattered or exchanged buffer), so S may be
/// below `bytes` and is 0 when `bytes` is too small to give each rank a block.
Layout LayoutOf(Op op, size_t bytes, int nranks, DType dtype);

/// busbw / algbw for `op` over `nranks` ranks: all_reduce 2(n-1)/n;
/// all_gather, reduce_scatter, alltoall (n-1)/n; broadcast, sendrecv 1.
double BusFactor(Op op, int nranks);

/// algbw in GB/s (decimal): S / seconds / 1e9.
double AlgorithmBandwidth(double algorithm_bytes, double seconds);

/// busbw in GB/s: AlgorithmBandwidth x BusFactor.
double BusBandwidth(Op op, int nranks, double algorithm_bytes, double seconds);

/// The value rank `rank` puts at index `index` of its send buffer: an integer
/// in [1, 4093], so sums over up to 4096 ranks stay exact in fp32 and int32.
/// Also a device function, so a fill kernel writes exactly the pattern the
/// host checks against.
PERFGATE_HOST_DEVICE inline int32_t InputValue(int rank, size_t index) {
  // A prime period well above any block boundary a misplaced chunk could
  // alias, and a rank shift that is not a multiple of it.
  return static_cast<int32_t>((index + 31 * static_cast<size_t>(rank)) % 4093) + 1;
}

/// The value index `index` of rank `rank`'s result must hold, counted from the
/// start of the result. In place, as in nccl-tests, all_gather's send data sits
/// at rank x chunk of the receive buffer and reduce_scatter's result at
/// rank x chunk of the send buffer. The broadcast root is rank 0.
int32_t ExpectedValue(Op op, int nranks, int rank, size_t index, const Layout& layout);

/// Elements of the result a rank checks: recv_count, or chunk for reduce_scatter.
size_t ResultCount(Op op, const Layout& layout);

/// Whether nccl-tests' in-place form exists for `op`: false for alltoall and
/// sendrecv, whose send buffer would be overwritten while it is read.
bool HasInPlace(Op op);

}  // namespace perfgate::suites::collectives
