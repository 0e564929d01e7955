// The program whose Google Benchmark JSON output is committed beside it (see
// README.md), built as the test program gbench_fixture that the Google
// Benchmark tests run for real output.
#include <benchmark/benchmark.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

static void BM_Copy(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  std::vector<char> src(n, 'x'), dst(n);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), n);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
}
BENCHMARK(BM_Copy)->Arg(4096)->Arg(262144);

static void BM_StridedSum(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  const size_t stride = static_cast<size_t>(state.range(1));
  std::vector<int> v(n * stride, 1);
  long sum = 0;
  for (auto _ : state) {
    sum = 0;
    for (size_t i = 0; i < v.size(); i += stride) sum += v[i];
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(n));
  state.counters["elements"] = static_cast<double>(n);
  state.counters["time_per_element"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate |
                                                     benchmark::Counter::kInvert);
}
BENCHMARK(BM_StridedSum)->ArgNames({"n", "stride"})->Args({4096, 1})->Args({4096, 8});

static void BM_Accumulate(benchmark::State& state) {
  std::vector<double> v(static_cast<size_t>(state.range(0)), 0.5);
  for (auto _ : state) benchmark::DoNotOptimize(std::accumulate(v.begin(), v.end(), 0.0));
}
BENCHMARK(BM_Accumulate)->Arg(1024)->Threads(2)->UseRealTime();

static void BM_NeedsDevice(benchmark::State& state) {
  for (auto _ : state) {
    state.SkipWithError("no device: /dev/accel0 is absent");
    break;
  }
}
BENCHMARK(BM_NeedsDevice);

BENCHMARK_MAIN();
