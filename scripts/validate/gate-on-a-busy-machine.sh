#!/usr/bin/env bash
# Measures how the gate behaves on this machine with other processes kept
# busy: N times each, an unchanged candidate ("same"), one 10 % slower
# ("slow") and, with KINDS, one 7.5 % slower ("edge": 1.5 times the 5 % A/B
# tolerance, which must never pass), through (1) `perfgate-agent ab` on sgemm,
# (2) `perfgate compare` of five Google Benchmark files a side (10
# repetitions each, the two binaries' runs interleaved), (3) the quickstart
# (minutes a run). Prints one line per trial and a table of outcomes (exit 0
# pass, 1 regression, 3 inconclusive).
# Usage: gate-on-a-busy-machine.sh [N] [OUT_DIR]
# SETS picks the sets (default "ab compare"; also quickstart, gbench,
# hyperfine, pytest, slowcmd), KINDS the candidates (default "same slow"),
# BUSY how many busy processes run beside (default 1). The sets gbench,
# hyperfine and pytest gate two builds of a team's own benchmark through
# `perfgate-agent ab --baseline-cmd/--candidate-cmd`: a Google Benchmark
# program (tests/work_bench_0, its candidate doing more work through
# PERFGATE_WORK_SLOWDOWN), a command timed by hyperfine (tests/spin_0 the
# same way) and a pytest-benchmark test (its work larger in the candidate's
# copy). slowcmd is a hyperfine case of about 3 s a run, gated with
# `--case-budget auto`. SGEMM_K picks the ab set's sgemm (512, 1024, 2048;
# default 512), SGEMM_CLOCK=cpu times it by the thread's CPU time
# (`--set clock=cpu`; unset: the wall clock), AB_BUDGET its case budget
# (`--case-budget`: seconds or auto; default 60). WITNESS=cpu_time gates the gbench set as a team whose cases
# run on one thread and never wait would: the default policy with
# `real_time` of `gbench/*` advisory on `cpu-*` (docs/existing-benchmarks.md,
# "Wall time or CPU time"), written to OUT_DIR/policy.yaml.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${PERFGATE_BUILD_DIR:-$root/build}
n=${1:-20}
out=${2:-$(mktemp -d)}
sets=" ${SETS:-ab compare$([ "${QUICKSTART:-0}" = 1 ] && echo ' quickstart' || true)} "
wants() { [[ "$sets" == *" $1 "* ]]; }
mkdir -p "$out"
agent="$build/agent/perfgate-agent"
perfgate="$build/cli/perfgate"
policy="$root/deploy/policy/default.yaml"

# The team's policy: the default one, its cpu-* rules opening with theirs.
# Checked before any busy process starts.
program_policy=$policy
if [ "${WITNESS:-}" = cpu_time ]; then
  program_policy="$out/policy.yaml"
  awk '{ print } /^    rules:$/ && !done { print "      - benchmark: \"gbench/*\""
    print "        metric: real_time"; print "        gating: false"; done = 1 }' "$policy" >"$program_policy"
  if ! grep -q 'benchmark: "gbench/\*"' "$program_policy"; then
    echo "WITNESS=cpu_time: $policy has no cpu-* rules list to add the gbench rule to" >&2
    exit 2
  fi
elif [ -n "${WITNESS:-}" ]; then
  echo "WITNESS: '$WITNESS' is not cpu_time (unset gates both of Google Benchmark's times)" >&2
  exit 2
fi

ab_budget=${AB_BUDGET:-60}
[[ "$ab_budget" == auto || "$ab_budget" =~ ^[0-9]+$ ]] || { echo "AB_BUDGET: '$ab_budget' is not seconds or auto" >&2; exit 2; }

case ${SGEMM_CLOCK:-} in
  '' | wall | cpu) ;;
  *) echo "SGEMM_CLOCK: '$SGEMM_CLOCK' is not wall or cpu" >&2; exit 2 ;;
esac

kinds=${KINDS:-same slow}
# shellcheck source=busy-loops.sh
. "$root/scripts/validate/busy-loops.sh"
start_busy "${BUSY:-1}"
percent() { case $1 in same) echo 0 ;; slow) echo 10 ;; edge) echo 7.5 ;; esac; }

g++ -O2 -std=c++17 "$root/scripts/validate/work_bench.cc" -o "$out/work_bench" -lbenchmark -lpthread

# The sides of the program sets: the same build, doing $1 percent more work.
gbench_cmd() {
  echo "env PERFGATE_WORK_SLOWDOWN=$1 $build/tests/work_bench_0 --benchmark_repetitions={samples} --benchmark_min_time=0.05 --benchmark_out={out}"
}
hyperfine_cmd() {
  echo "env PERFGATE_WORK_SLOWDOWN=$1 hyperfine -N --style none --warmup 1 --runs {samples} --export-json {out} -n work '$build/tests/spin_0 20000000'"
}
slowcmd_cmd() {  # about 3 s a run on a 2-core VM with a busy neighbour
  echo "env PERFGATE_WORK_SLOWDOWN=$1 hyperfine -N --style none --runs {samples} --export-json {out} -n spin '$build/tests/spin_0 1200000000'"
}
pytest_cmd() {  # a copy of the test whose work is $1 percent larger
  mkdir -p "$out/pytest-$1"
  printf 'def work(n):\n    x = 88172645463325252\n    for _ in range(n):\n        x = (x ^ (x << 13)) & 0xFFFFFFFFFFFFFFFF\n        x ^= x >> 7\n        x = (x ^ (x << 17)) & 0xFFFFFFFFFFFFFFFF\n    return x\n\ndef test_work(benchmark):\n    benchmark(work, %d)\n' \
    "$(awk -v p="$1" 'BEGIN { printf "%d", 100000 * (100 + p) / 100 }')" >"$out/pytest-$1/test_work.py"
  echo "/usr/bin/python3 -m pytest -q -p no:cacheprovider --rootdir $out/pytest-$1 --benchmark-min-rounds={samples} --benchmark-max-time=0.000001 --benchmark-warmup=off --benchmark-json={out} $out/pytest-$1/test_work.py"
}

record() {  # set trial exit seconds
  printf '%s %s %s %s\n' "$1" "$2" "$3" "$4" | tee -a "$out/trials.txt"
}

for i in $(seq 1 "$n"); do
  for kind in $kinds; do
    pct=$(percent "$kind")
    if wants ab; then
      cand=("$agent")
      k=${SGEMM_K:-512}
      clock=()
      [ -n "${SGEMM_CLOCK:-}" ] && clock=(--set "clock=$SGEMM_CLOCK")
      key="sgemm{${SGEMM_CLOCK:+clock=$SGEMM_CLOCK,}k=$k"
      [ "$kind" != same ] && cand+=(--inject-slowdown "kernels/$key*=$pct")
      start=$(date +%s)
      set +e
      "$agent" ab --offline --suite kernels --filter "$key,m=$k,*" "${clock[@]}" --policy "$policy" --case-budget "$ab_budget" \
        --baseline "$agent" --candidate "$(printf "'%s' " "${cand[@]}")" --json "$out/ab-$kind-$i.json" \
        >"$out/ab-$kind-$i.log" 2>&1
      rc=$?
      set -e
      record "ab-$kind" "$i" "$rc" "$(( $(date +%s) - start ))"
    fi

    if wants compare; then
      start=$(date +%s)
      for k in 1 2 3 4 5; do
        "$out/work_bench" --benchmark_repetitions=10 --benchmark_min_time=0.02 --benchmark_format=json \
          >"$out/a-$k.json" 2>/dev/null
        PERFGATE_WORK_SLOWDOWN=$pct "$out/work_bench" --benchmark_repetitions=10 --benchmark_min_time=0.02 \
          --benchmark_format=json >"$out/b-$k.json" 2>/dev/null
      done
      set +e
      "$perfgate" compare --baseline "$out"/a-?.json --candidate "$out"/b-?.json --policy "$policy" \
        --sku cpu-validation >"$out/compare-$kind-$i.log" 2>&1
      rc=$?
      set -e
      record "compare-$kind" "$i" "$rc" "$(( $(date +%s) - start ))"
    fi

    for tool in gbench hyperfine pytest slowcmd; do
      wants "$tool" || continue
      start=$(date +%s)
      set +e
      # Every pytest block starts an interpreter and a collector (seconds on a
      # busy machine): its case gets the budget for as many rounds as the others.
      # The 3 s command asks for the budget its rounds need.
      budget=60; [ "$tool" = pytest ] && budget=150; [ "$tool" = slowcmd ] && budget=auto
      "$agent" ab --offline --policy "$program_policy" --case-budget "$budget" --baseline-cmd "$("${tool}_cmd" 0)" \
        --candidate-cmd "$("${tool}_cmd" "$pct")" --json "$out/$tool-$kind-$i.json" >"$out/$tool-$kind-$i.log" 2>&1
      rc=$?
      set -e
      record "$tool-$kind" "$i" "$rc" "$(( $(date +%s) - start ))"
    done

    if wants quickstart; then
      start=$(date +%s)
      set +e
      if [ "$kind" != same ]; then
        PERFGATE_DEMO_SLOWDOWN="kernels/sgemm{k=1024*=$pct" "$root/scripts/quickstart.sh" >"$out/qs-$kind-$i.log" 2>&1
      else
        "$root/scripts/quickstart.sh" >"$out/qs-$kind-$i.log" 2>&1
      fi
      rc=$?
      set -e
      record "quickstart-$kind" "$i" "$rc" "$(( $(date +%s) - start ))"
    fi
  done
done

echo
echo "| set | trials | exit 0 (pass) | exit 1 (regression) | exit 3 (inconclusive) | other | longest s |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for set in $(awk '{print $1}' "$out/trials.txt" | sort -u); do
  awk -v s="$set" '$1 == s { t++; c[$3]++; if ($4 > m) m = $4 }
    END { printf "| %s | %d | %d | %d | %d | %d | %d |\n", s, t, c[0], c[1], c[3], t - c[0] - c[1] - c[3], m }' \
    "$out/trials.txt"
done
echo "(logs and reports in $out)"
