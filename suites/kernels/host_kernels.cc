// Host backend of the kernels suite.
#include <cblas.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <new>
#include <cstring>
#include <memory>
#include <random>

#include "absl/strings/str_cat.h"
#include "suites/kernels/kernels.h"
#include "suites/kernels/ceilings.h"

namespace perfgate::suites::kernels {
namespace {

// 256 MiB per array: far beyond any host's last-level cache, so every
// iteration streams from DRAM.
constexpr const char* kDefaultBytes = "268435456";

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
template <typename T>
using Buffer = std::unique_ptr<T[], FreeDeleter>;

// Working sets are 2 MiB-aligned and backed by transparent huge pages where
// the kernel allows it (THP "madvise" mode is common): with 4 KiB pages the
// TLB misses of a streaming loop vary with where the pages land, which moved
// host triad by several percent from one process to the next.
template <typename T>
Buffer<T> Allocate(size_t n) {
  constexpr size_t kHuge = 2u << 20;
  const size_t bytes = std::max<size_t>(n * sizeof(T), 1);
  void* p = nullptr;
  if (posix_memalign(&p, kHuge, bytes) != 0) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);  // advisory: failure only costs speed
  return Buffer<T>(static_cast<T*>(p));
}

void Copy(State& state) {
  const int64_t bytes = state.IntParam("bytes");
  if (state.failed()) return;
  if (bytes < 1024) return state.Fail("bytes must be at least 1024");
  // With --inject-work the copy moves more bytes than its metrics count.
  const size_t nominal = static_cast<size_t>(bytes);
  const size_t n = state.AddWork(nominal, "bytes");
  auto src = Allocate<unsigned char>(n);
  auto dst = Allocate<unsigned char>(n);
  std::mt19937 rng(1);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(rng() | 1);
  std::memset(dst.get(), 0, n);
  // A copy of N bytes reads N and writes N.
  state.SetBytesPerIteration(2.0 * static_cast<double>(nominal));
  state.MeasureHost([&] { std::memcpy(dst.get(), src.get(), n); });
  if (std::memcmp(dst.get(), src.get(), n) != 0) state.Fail("copy: destination differs from source");
}

void Triad(State& state) {
  const int64_t bytes = state.IntParam("bytes");
  if (state.failed()) return;
  if (bytes < 1024) return state.Fail("bytes must be at least 1024");
  // With --inject-work the loop runs over more elements than its metrics
  // count: a plain loop, so its instructions grow by exactly that fraction.
  const size_t nominal = static_cast<size_t>(bytes) / sizeof(double);
  const size_t n = state.AddWork(nominal, "elements");
  auto a = Allocate<double>(n), b = Allocate<double>(n), c = Allocate<double>(n);
  FillRandom(b.get(), n, 2);
  FillRandom(c.get(), n, 3);
  constexpr double kScalar = 3.0;
  // Reads b and c, writes a.
  state.SetBytesPerIteration(3.0 * static_cast<double>(nominal * sizeof(double)));
  state.MeasureHost([&] {
    double* __restrict pa = a.get();
    const double* __restrict pb = b.get();
    const double* __restrict pc = c.get();
    for (size_t i = 0; i < n; ++i) pa[i] = pb[i] + kScalar * pc[i];
  });
  // Verify against the reference on a slice; the loop above is the same
  // arithmetic, so any difference is a real fault.
  const size_t m = std::min<size_t>(n, 1 << 16);
  auto ref = Allocate<double>(m);
  TriadReference(b.get(), c.get(), kScalar, ref.get(), m);
  for (size_t i = 0; i < m; ++i) {
    if (ref[i] != a[i]) return state.Fail(absl::StrCat("triad: a[", i, "] = ", a[i], ", expected ", ref[i]));
  }
}

// sgemm's clock is an option (State::CpuClock): `wall`, the default, left
// out of the key, or `cpu`. OpenBLAS does the work of one thread on the
// calling thread, so that thread's CPU time is all of the GEMM's.
void Sgemm(State& state) {
  const int64_t m = state.IntParam("m"), n = state.IntParam("n"), k = state.IntParam("k");
  const int64_t threads = state.IntParam("threads");
  if (state.failed()) return;
  if (m <= 0 || n <= 0 || k <= 0) return state.Fail("m, n and k must be positive");
  if (threads <= 0 || threads > 1024) return state.Fail("threads must be in 1..1024");
  const bool cpu_clock = state.CpuClock(threads);
  if (state.failed()) return;
  // The thread count is a parameter, not whatever the machine offers: the
  // same key must mean the same work on every runner of a SKU.
  openblas_set_num_threads(static_cast<int>(threads));
  // With --inject-work the inner dimension is longer than its metrics count:
  // the multiply-adds, the packing of A and B and so the instructions grow by
  // that fraction of k (all but the writes of C, which k does not touch).
  const auto kk = static_cast<int64_t>(state.AddWork(static_cast<size_t>(k), "of the inner dimension k"));
  auto a = Allocate<float>(m * kk), b = Allocate<float>(kk * n), c = Allocate<float>(m * n);
  FillRandom(a.get(), m * kk, 4);
  FillRandom(b.get(), kk * n, 5);
  state.SetFlopsPerIteration(2.0 * static_cast<double>(m) * n * k);
  ThreadCpuClock cpu;
  state.MeasureHost(
      [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                    static_cast<int>(kk), 1.0f, a.get(), static_cast<int>(kk), b.get(), static_cast<int>(n),
                    0.0f, c.get(), static_cast<int>(n));
      },
      cpu_clock ? static_cast<Clock&>(cpu) : SteadyClock());
  // Check a spread of entries against dot products in double precision.
  std::mt19937 rng(6);
  for (int t = 0; t < 64; ++t) {
    const int64_t i = rng() % m, j = rng() % n;
    double ref = 0;
    for (int64_t p = 0; p < kk; ++p) ref += static_cast<double>(a[i * kk + p]) * b[p * n + j];
    const double got = c[i * n + j];
    if (std::fabs(got - ref) > 1e-4 * std::fabs(ref) + 1e-3) {
      return state.Fail(absl::StrCat("sgemm: C[", i, ",", j, "] = ", got, ", expected ", ref));
    }
  }
  // The best sgemm of a thread count is the host's peak that MFU divides by;
  // a CPU-time figure is no peak for wall-timed cases, nor is a rate that
  // counts less work than was done.
  if (!state.failed() && state.measured() && !cpu_clock && kk == k) {
    Ceilings::Process().Offer(HostGemmCeiling(threads), state.id().Key(),
                              UnthrottledValues(state.samples(), 1));
  }
}

}  // namespace

std::string HostGemmCeiling(int64_t threads) { return absl::StrCat("host_sgemm_t", threads); }

std::optional<double> HostGemmPeak(State& state, int threads) {
  const std::string what = HostGemmCeiling(threads);
  if (!Ceilings::Process().Best(what)) {
    const std::string t = std::to_string(threads);
    State scratch(BenchmarkId{"kernels", "sgemm", {{"m", "1024"}, {"n", "1024"}, {"k", "1024"}, {"threads", t}}},
                  {MetricKind::kTime, MetricKind::kThroughput}, state.options(), 0);
    Sgemm(scratch);
    if (scratch.failed() || !scratch.measured()) {
      state.Fail(absl::StrCat("measuring the host sgemm peak failed: ", scratch.reason()));
      return std::nullopt;
    }
  }
  const std::optional<CeilingSource> best = Ceilings::Process().Best(what);
  if (!best) {
    state.Fail("the host sgemm peak could not be measured");
    return std::nullopt;
  }
  return best->median * 1e9;  // GFLOP/s
}

void TriadReference(const double* b, const double* c, double scalar, double* a, size_t n) {
  for (size_t i = 0; i < n; ++i) a[i] = b[i] + scalar * c[i];
}

void GemmReference(const float* a, const float* b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += static_cast<double>(a[i * k + p]) * b[p * n + j];
      c[i * n + j] = static_cast<float>(acc);
    }
  }
}

void FillRandom(float* data, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(0.5f, 1.5f);
  for (size_t i = 0; i < n; ++i) data[i] = dist(rng);
}

void FillRandom(double* data, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(0.5, 1.5);
  for (size_t i = 0; i < n; ++i) data[i] = dist(rng);
}

// The copy and the triad stream on the calling thread alone.
unsigned OneCpu(const BenchmarkId&) { return 1; }

void RegisterHost(Registry& registry) {
  registry.Add({.suite = "kernels",
                .name = "copy",
                .description = "host memcpy bandwidth, bytes read + written",
                .axes = {{"bytes", {kDefaultBytes}}},
                .metrics = {MetricKind::kTime, MetricKind::kBandwidth},
                .body = Copy,
                .host_cpus = OneCpu});
  registry.Add({.suite = "kernels",
                .name = "triad",
                .description = "STREAM triad a = b + s*c on doubles, bytes read + written",
                .axes = {{"bytes", {kDefaultBytes}}},
                .metrics = {MetricKind::kTime, MetricKind::kBandwidth},
                .body = Triad,
                .host_cpus = OneCpu});
  registry.Add({.suite = "kernels",
                .name = "sgemm",
                .description = "fp32 GEMM C = A*B through OpenBLAS, 2*M*N*K flops; --set clock=cpu times the "
                               "calling thread's CPU time (threads=1)",
                // One thread by default: a per-core figure, steady on runners
                // whose other cores serve other work.
                .axes = {{"threads", {"1"}}},
                .points = {{{"m", "512"}, {"n", "512"}, {"k", "512"}},
                           {{"m", "1024"}, {"n", "1024"}, {"k", "1024"}},
                           {{"m", "2048"}, {"n", "2048"}, {"k", "2048"}}},
                .options = {{"clock", kWallClock}},
                .metrics = {MetricKind::kTime, MetricKind::kThroughput},
                .body = Sgemm});
}

}  // namespace perfgate::suites::kernels
