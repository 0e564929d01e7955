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
# shellcheck source=scripts/configure.sh
. "$root/scripts/configure.sh"
perfgate_configure "$root" "$build"
cmake --build "$build" -j"$jobs"
phase_done build
cd "$build"
# CTest starts the longest tests first when it knows their costs, which it
# learns from a run in this folder; a fresh one starts from the seconds each
# test took in a clean CI run (tests/ctest-costs.txt; docs/building.md), so
# that the tests run alone and the chain of measuring tests do not wait
# until the end.
costs=Testing/Temporary/CTestCostData.txt
if [ ! -s "$costs" ]; then
  mkdir -p "${costs%/*}"
  cp "$root/tests/ctest-costs.txt" "$costs"
fi
status=0
ctest --output-on-failure --timeout 600 -j"$jobs" "$@" || status=$?
phase_done tests
exit $status
