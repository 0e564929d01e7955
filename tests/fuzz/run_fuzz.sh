#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time: run_fuzz.sh BINARY SEEDS WORK SECONDS.
# New inputs go to WORK (in the build tree); the seed corpus in the
# repository is only read. A crash, leak or sanitizer report fails the test
# and leaves the input that caused it in WORK/.. as crash-*, leak-* or timeout-*.
set -euo pipefail
binary=$1 seeds=$2 work=$3 seconds=$4
mkdir -p "$work"
cd "$(dirname "$work")"
exec "$binary" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
  -print_final_stats=1 "$work" "$seeds"
