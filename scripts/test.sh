#!/usr/bin/env bash
# The test command: installs what is missing, builds everything (CUDA targets
# too when nvcc is found), and runs every test — unit, db (a private
# PostgreSQL per test), e2e (agent -> gRPC -> coordinator -> gate), container
# (perfgate's images built and run by digest with podman) and browser (the
# dashboard in headless Chromium).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PERFGATE_BUILD_DIR:-$root/build}
jobs=${PERFGATE_JOBS:-$(nproc)}

# How long each phase took, printed however the run ends.
phase_start=$SECONDS
phases=()
phase_done() { phases+=("$1 $((SECONDS - phase_start)) s"); phase_start=$SECONDS; }
report_phases() {
  [ ${#phases[@]} -gt 0 ] || return 0
  local joined
  printf -v joined '%s, ' "${phases[@]}"
  echo "perfgate test.sh: ${joined%, }; total $SECONDS s"
}
trap report_phases EXIT

"$root/scripts/install-deps.sh"
phase_done install
# Optimised (-O2) without debug information: debug information makes the
# gRPC- and GoogleTest-heavy files take about 1.5 times the CPU time to
# compile (store_test.cc: 37.8 s against 24.7 s), and CI reads failures
# from the tests' output.
#
# Compiles through ccache when it is installed: a second build of the same
# sources, in any clone (paths are taken relative to the checkout), reuses
# the objects of the first. A machine without a cache compiles everything.
launcher=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
            -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" "${launcher[@]}"
cmake --build "$build" -j"$jobs"
phase_done build
cd "$build"
status=0
ctest --output-on-failure --timeout 600 -j"$jobs" "$@" || status=$?
phase_done tests
exit $status
