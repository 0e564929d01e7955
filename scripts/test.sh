#!/usr/bin/env bash
# The test command: installs what is missing, builds everything (CUDA targets
# too when nvcc is found), and runs every test — unit, db (a private
# PostgreSQL per test), e2e (agent -> gRPC -> coordinator -> gate) and browser
# (the dashboard in headless Chromium).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PERFGATE_BUILD_DIR:-$root/build}
jobs=${PERFGATE_JOBS:-$(nproc)}

"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j"$jobs"
cd "$build"
ctest --output-on-failure --timeout 600 -j"$jobs" "$@"
