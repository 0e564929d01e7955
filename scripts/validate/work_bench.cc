// A Google Benchmark program for checking `perfgate compare` of several
// result files a side and `perfgate-agent ab --baseline-cmd`: one
// compute-bound case whose work grows by PERFGATE_WORK_SLOWDOWN percent
// (real extra iterations, not a sleep), or by PERFGATE_WORK_PERCENT when
// built with -DPERFGATE_WORK_PERCENT=P (a slower build of the same program).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>

#ifndef PERFGATE_WORK_PERCENT
#define PERFGATE_WORK_PERCENT 0
#endif

static double Slowdown() {
  const char* s = std::getenv("PERFGATE_WORK_SLOWDOWN");
  return (s == nullptr ? PERFGATE_WORK_PERCENT : std::atof(s)) / 100.0;
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
