#!/usr/bin/env bash
# Measures `perfgate-agent ab --count` on this machine with one core kept
# busy by another process: N times each, a Google Benchmark program
# (tests/work_bench_0, built by the test build) against itself with an
# environment of a random size (0 to 8 KiB more, which moves the stack and
# so the addresses; address-space randomisation as the kernel has it), and
# against itself doing 1 % more work (PERFGATE_WORK_SLOWDOWN=1). With
# SUBJECT=own, perfgate's own host case instead (kernels/triad of 4 MiB,
# `ab --baseline/--candidate`), 1 % more work by `--inject-work`; with
# SUBJECT=sgemm, the host sgemm of 512 x 512 x 512 on one thread the same
# way (its added work a longer inner dimension k). Prints
# one line per trial (exit code, counted change, seconds) and the range of
# the A/A changes. BUSY sets how many busy processes run beside (default 1);
# SETS the candidates (default "same plus1"; plusP does P % more work, as
# plus10 or plus7.5); WITNESSES=both times the cases as well and gates them
# with the default policy (deploy/policy/default.yaml), as `ab --count`
# without --count-only does (default: counts only). SAMPLES sets the samples
# of each counted process (`ab --block-samples`; the agent's default is 3):
# under callgrind one iteration of the sgemm takes about 7 s, and a count
# does not need three to be exact.
# Usage: [SUBJECT=own|sgemm] [BUSY=2] [SAMPLES=1] [SETS=...] [WITNESSES=both] counts-on-a-busy-machine.sh [N] [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${PERFGATE_BUILD_DIR:-$root/build}
n=${1:-20}
out=${2:-$(mktemp -d)}
mkdir -p "$out"
agent="$build/agent/perfgate-agent"
subject=${SUBJECT:-gbench}
case $subject in
  gbench) ;;
  own) case_key='kernels/triad*'; case_args=(--filter "$case_key" --set bytes=4194304) ;;
  sgemm) case_key='kernels/sgemm*'; case_args=(--filter 'kernels/sgemm{k=512,m=512,*') ;;
  *) echo "SUBJECT: '$subject' is not gbench, own or sgemm" >&2; exit 2 ;;
esac
bench="$build/tests/work_bench_0 --benchmark_repetitions={samples} --benchmark_min_time=0.05 --benchmark_out={out}"

sets=${SETS:-same plus1}
for set in $sets; do
  [[ "$set" == same || "$set" =~ ^plus[0-9]+(\.[0-9]+)?$ ]] || { echo "SETS: '$set' is not same or plusP" >&2; exit 2; }
done
witness=(--count-only)
samples=()
if [ -n "${SAMPLES:-}" ]; then
  [[ "$SAMPLES" =~ ^[1-9][0-9]*$ ]] || { echo "SAMPLES: '$SAMPLES' is not a positive number" >&2; exit 2; }
  samples=(--block-samples "$SAMPLES")
fi
case ${WITNESSES:-counts} in
  counts) ;;
  both) witness=(--policy "$root/deploy/policy/default.yaml") ;;
  *) echo "WITNESSES: '$WITNESSES' is not counts or both" >&2; exit 2 ;;
esac

# shellcheck source=busy-loops.sh
. "$root/scripts/validate/busy-loops.sh"
start_busy "${BUSY:-1}"

echo "ASLR (kernel.randomize_va_space): $(cat /proc/sys/kernel/randomize_va_space)"
for i in $(seq 1 "$n"); do
  for set in $sets; do
    pct=${set#plus}
    pad=$(head -c $((RANDOM % 8192 + 1)) /dev/zero | tr '\0' x)
    if [ "$subject" != gbench ]; then
      if [ "$set" = same ]; then cand="env PERFGATE_PADDING=$pad $agent"; else cand="$agent --inject-work $case_key=$pct"; fi
      sides=("${case_args[@]}" --baseline "$agent" --candidate "$cand")
    else
      if [ "$set" = same ]; then cand="env PERFGATE_PADDING=$pad $bench"; else cand="env PERFGATE_WORK_SLOWDOWN=$pct $bench"; fi
      sides=(--baseline-cmd "$bench" --candidate-cmd "$cand")
    fi
    start=$(date +%s.%N)
    rc=0
    "$agent" ab --offline "${sides[@]}" --count instructions "${witness[@]}" "${samples[@]}" \
      --json "$out/$set-$i.json" >"$out/$set-$i.log" 2>&1 || rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    change=$(python3 -c "import json,sys; v=[x for x in json.load(open(sys.argv[1]))['verdicts'] if x['metric']=='instructions'][0]; print('%+.4f %%' % (v['change']*100))" "$out/$set-$i.json")
    printf '%s %2d exit %d change %s %.1f s\n' "$set" "$i" "$rc" "$change" "$secs"
  done
done | tee "$out/trials.txt"
for set in $sets; do
  awk -v s="$set" '$1 == s { n++; if ($4 == 0) p++; if ($4 == 1) r++; if ($4 == 3) u++; c = $6 + 0; if (n == 1 || c < lo) lo = c; if (n == 1 || c > hi) hi = c; if ($8 > t) t = $8 }
    END { printf "%s: %d trials, %d pass, %d regression, %d inconclusive, change %+.4f %% to %+.4f %%, longest %.1f s\n", s, n, p, r, u, lo, hi, t }' "$out/trials.txt"
done
