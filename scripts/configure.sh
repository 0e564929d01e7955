# Sourced by scripts/test.sh and scripts/quickstart.sh: one configuration for
# both, so that a build of either reuses the other's objects.
#
# Optimised (-O2) without debug information: debug information makes the
# gRPC- and GoogleTest-heavy files take about 1.5 times the CPU time to
# compile (store_test.cc: 37.8 s against 24.7 s), and CI reads failures
# from the tests' output.
#
# Compiles through ccache when it is installed (scripts/install-deps.sh
# installs it): a second build of the same sources with the same flags, in
# any build folder of the checkout, reuses the objects of the first. The
# unity batches (docs/building.md) name their sources by absolute path, so
# another clone's objects are reused only with -DPERFGATE_UNITY=OFF. A
# machine without a cache compiles everything.
#
# Generates for Ninja when it is installed (scripts/install-deps.sh installs
# it): it schedules the whole build's compiles as one graph, where Make
# walks target by target and runs CMake's dependency scanner in each
# (docs/building.md). A build folder keeps the generator it was made with.
#
# perfgate_configure ROOT BUILD_DIR [CMAKE_ARGUMENTS...]
perfgate_configure() {
  local root=$1 dir=$2
  shift 2
  local launcher=()
  if command -v ccache >/dev/null; then
    export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
              -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  local generator=()
  if command -v ninja >/dev/null && [ ! -f "$dir/CMakeCache.txt" ]; then
    generator=(-G Ninja)
  fi
  cmake -S "$root" -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
    "${launcher[@]}" "$@"
}
