// A command of fixed work for timing whole processes (hyperfine): spins
// ITERATIONS steps of xorshift and exits. Built with
// -DPERFGATE_WORK_PERCENT=P it does P percent more work (a slower build of
// the same program); PERFGATE_WORK_SLOWDOWN in the environment overrides it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#ifndef PERFGATE_WORK_PERCENT
#define PERFGATE_WORK_PERCENT 0
#endif

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: spin ITERATIONS\n");
    return 2;
  }
  const char* env = std::getenv("PERFGATE_WORK_SLOWDOWN");
  const double slowdown = (env != nullptr ? std::atof(env) : PERFGATE_WORK_PERCENT) / 100.0;
  const auto n = static_cast<uint64_t>(std::strtod(argv[1], nullptr) * (1.0 + slowdown));
  uint64_t x = 88172645463325252ull;
  for (uint64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  // The exit status depends on the result, so the loop cannot be optimised away.
  return x == 42 ? 1 : 0;
}
