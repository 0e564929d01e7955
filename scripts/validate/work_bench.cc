// A Google Benchmark program for checking `perfgate compare` of several
// result files a side: one compute-bound case whose work grows by
// PERFGATE_WORK_SLOWDOWN percent (real extra iterations, not a sleep).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

static double Slowdown() {
  const char* s = std::getenv("PERFGATE_WORK_SLOWDOWN");
  return s == nullptr ? 0.0 : std::atof(s) / 100.0;
}

static void BM_Work(benchmark::State& state) {
  const auto n = static_cast<uint64_t>(static_cast<double>(state.range(0)) * (1.0 + Slowdown()));
  for (auto _ : state) {
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < n; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
    }
    benchmark::DoNotOptimize(x);
  }
}
BENCHMARK(BM_Work)->Arg(200000);

BENCHMARK_MAIN();
