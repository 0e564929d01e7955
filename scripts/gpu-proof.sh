#!/usr/bin/env bash
# perfgate-gpu-proof: every figure docs/gpu-results.md owes, in one command on
# a GPU node, from the unpacked bundle (scripts/bundle.sh installs this file
# as bin/perfgate-gpu-proof).
#
#   bin/perfgate-gpu-proof OUTDIR
#
# Stages, each bounded in time and written to OUTDIR/<stage>/ with a `done`
# mark; a stage already done is skipped, so a cut-off call is resumed by
# running the same command again:
#   env          the device, driver, CUDA, cuBLAS, NCCL and PyTorch versions;
#                NVML at rest (the agent's probe, nvidia-smi); where the
#                cuBLASLt and NCCL the CUDA cases load were found
#   gpu-tests    the device tests (the binaries `ctest -L gpu` runs), logs
#   kernels      the kernels suite's CUDA cases beside scripts/gpu-reference.py,
#                with NVML sampled under load (clocks, reasons, power)
#   model        training step and inference beside scripts/model-reference.py
#   collectives  the collectives suite on the GPUs present beside
#                torch.distributed (two GPUs or more)
#   ab           two A/A runs of the kernels suite (must pass) and one with a
#                5 % slowdown injected into the bf16 8192^3 GEMM (must fail)
#   counts       the GPU counters of that GEMM and the device copy under
#                Nsight Compute, one counted process a side (an A/A that
#                must pass); not measured where no ncu is found
# Then OUTDIR/gpu-results.md: one table per stage, every figure beside its
# reference and their ratio, and the raw JSON of every run beside it.
#
# Without a GPU every stage writes its files with "not measured: <reason>"
# in under two minutes, and the command exits 0. With one it exits 1 when a
# check failed (a device test, an A/A gate, the injected slowdown missed),
# and also when the node has a GPU (a /dev/nvidia* device file, or an
# nvidia-smi that hangs) that neither nvidia-smi nor the driver (the agent's
# probe: the CUDA driver and NVML) can list. It exits 3 when this call's
# budget ran out before every stage was done: run it again to resume.
#
# Budget: every external command runs under `timeout -k`, bounded by what it
# must do (docs/gpu-results.md lists each bound), and the whole call stops
# starting work once nine minutes are spent. Overrides, for tests and odd
# nodes: PERFGATE_PROOF_BUDGET_S (540), PERFGATE_PROOF_PROBE_S (caps each
# probe's bound), PERFGATE_PROOF_DEV_DIR (/dev, where device files are
# looked for), PERFGATE_PROOF_CUDA_DIRS (the toolkit's library folders,
# colon-separated).
set -uo pipefail

[[ $# -eq 1 ]] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
here=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)
top=$(dirname "$here")
agent=$top/bin/perfgate-agent
tests=$top/libexec/perfgate/tests
scripts=$top/share/perfgate/scripts
policy=$top/share/perfgate/policy.yaml
mkdir -p "$1" || exit 2
out=$(cd "$1" && pwd)

# The bf16 GEMM the A/B runs measure and the slowdown is injected into.
bf16_gemm='kernels/gemm{dtype=bf16,k=8192,m=8192,n=8192}'
# The kernels suite's CUDA cases (its host cases are not owed here).
kernel_filters=(--filter 'kernels/device_*' --filter 'kernels/gemm*' --filter 'kernels/rmsnorm*'
                --filter 'kernels/ceiling*')

log() { echo "perfgate-gpu-proof: $*" >&2; }
# A check that failed, kept in the stage's folder so a resumed call reports it.
fail() { echo "$2" >> "$1/failed"; }

# This call's deadline: nine minutes, less 15 s kept for writing the results.
deadline=$((SECONDS + ${PERFGATE_PROOF_BUDGET_S:-540} - 15))
# The seconds a command may run: its bound, or less so that it is killed
# (GRACE seconds after its SIGTERM) before the deadline; 0 when none is left.
allow() {  # BOUND GRACE
  local left=$((deadline - SECONDS - $2))
  if ((left < $1)); then echo $((left > 0 ? left : 0)); else echo "$1"; fi
}
# Runs CMD under `timeout -k GRACE T` with T = allow BOUND GRACE: SIGTERM at T
# seconds, SIGKILL GRACE seconds later (the agent finishes the case it is in
# on SIGTERM; a case stuck in a CUDA or NCCL call would never end). 124 or
# 137 when it was stopped, 124 without running when no time is left.
bounded() {  # BOUND GRACE CMD...
  local t
  t=$(allow "$1" "$2")
  ((t > 0)) || return 124
  timeout -k "$2" "$t" "${@:3}"
}
stopped() { [[ $1 -eq 124 || $1 -eq 137 ]]; }
# A probe of the node (nvidia-smi, python3, ldconfig): BOUND seconds at most,
# fewer where PERFGATE_PROOF_PROBE_S says, then killed 2 s after SIGTERM.
probe_cap=${PERFGATE_PROOF_PROBE_S:-}
probe_bound() { if [[ -n $probe_cap ]] && ((probe_cap < $1)); then echo "$probe_cap"; else echo "$1"; fi; }
probe() {  # BOUND CMD...
  bounded "$(probe_bound "$1")" 2 "${@:2}"
}

# Is there a GPU, and what can measure it? nvidia-smi, and the driver itself
# through the agent's probe (the CUDA driver's device list, NVML); a device
# file tells that a GPU is there even when neither answers (a sandboxed
# runtime may hide it from both).
rm -f "$out/failed"
smi_count=0 smi_note= driver_count=0 driver_note= hung=
if ! command -v nvidia-smi >/dev/null 2>&1; then
  smi_note="nvidia-smi not found"
else
  smi_list=$(probe 10 nvidia-smi -L 2>&1)
  rc=$?
  if stopped $rc; then
    smi_note="nvidia-smi -L did not answer within $(probe_bound 10) s" hung=1
  else
    smi_count=$(grep -c '^GPU ' <<<"$smi_list")
    ((smi_count > 0)) || smi_note="nvidia-smi -L lists none (exit $rc${smi_list:+: $(head -n 1 <<<"$smi_list")})"
  fi
fi
probe 15 "$agent" probe > "$out/probe.txt" 2>&1
rc=$?
if stopped $rc; then
  driver_note="perfgate-agent probe (the CUDA driver, NVML) did not answer within $(probe_bound 15) s" hung=1
else
  driver_count=$(grep -cE '^gpu [0-9]+:' "$out/probe.txt")
  if ((driver_count == 0)); then
    driver_note="the CUDA driver finds none ($(sed -n 's/^gpu: none (\(.*\))$/\1/p' "$out/probe.txt" | head -n 1 |
      grep . || echo "perfgate-agent probe exit $rc"); NVML: $(sed -n 's/^nvml: //p' "$out/probe.txt" | head -n 1))"
  fi
fi
dev_dir=${PERFGATE_PROOF_DEV_DIR:-/dev}
device_file=$(ls "$dev_dir" 2>/dev/null | grep -E '^nvidia[0-9]+$' | head -n 1)
gpu_count=$((smi_count > driver_count ? smi_count : driver_count))
gpu_reason= unusable=
if ((gpu_count > 0)); then
  found_by="nvidia-smi lists $smi_count, the CUDA driver $driver_count"
elif [[ -n $device_file || -n $hung ]]; then
  unusable=1
  evidence=${device_file:+$dev_dir/$device_file is there}
  [[ -n $hung ]] && evidence="${evidence:+$evidence, }a probe of it hangs"
  gpu_reason="nothing could measure the GPU this node has ($evidence): $smi_note; $driver_note"
  echo "the GPU: $gpu_reason" > "$out/failed"
elif [[ $smi_note == "nvidia-smi not found" ]]; then
  gpu_reason="no NVIDIA driver on this node: $smi_note, no $dev_dir/nvidia* device file, $driver_note"
else
  gpu_reason="no GPU: $smi_note, no $dev_dir/nvidia* device file, $driver_note"
fi
# nvidia-smi answers: its NVML readings (at rest, under load) can be taken.
smi_ok=$((smi_count > 0))

# cuBLASLt and NCCL, which the CUDA cases load at run time (dlopen), come
# from the node. Searched, in this order: the loader's cache (ldconfig -p:
# found without help), the CUDA toolkit's folders, and PyTorch's wheels in
# the site-packages of every python3 on PATH (nvidia/*/lib, torch/lib). A
# folder where one was found is put on LD_LIBRARY_PATH; they hold CUDA's
# libraries only, so none shadows one of the bundle's. Each library's
# origin, or its absence, goes to the results.
pythons=()
while read -r py; do
  [[ -n $py ]] && pythons+=("$py")
done < <(IFS=:; for d in $PATH; do ls -d "$d"/python3 "$d"/python3.[0-9]* 2>/dev/null; done |
           grep -E '/python3(\.[0-9]+)?$' | while read -r p; do [[ -x $p ]] && echo "$(readlink -f "$p")"; done |
           awk '!seen[$0]++')
library_dirs=() library_sources=()
IFS=: read -ra toolkit <<<"${PERFGATE_PROOF_CUDA_DIRS:-/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib}"
for d in "${toolkit[@]}"; do
  [[ -d $d ]] && library_dirs+=("$d") library_sources+=("the CUDA toolkit")
done
for py in "${pythons[@]}"; do
  while read -r d; do
    [[ -n $d ]] && library_dirs+=("$d") library_sources+=("the site-packages of $py")
  done < <(probe 5 "$py" -c 'import glob, os, site
paths = site.getsitepackages() + [site.getusersitepackages()]
for p in paths:
    for d in sorted(glob.glob(os.path.join(p, "nvidia", "*", "lib"))) + [os.path.join(p, "torch", "lib")]:
        if os.path.isdir(d):
            print(d)' 2>/dev/null)
done
ldconfig_bin=$(command -v ldconfig || echo /sbin/ldconfig)
loader_cache=$(probe 5 "$ldconfig_bin" -p 2>/dev/null)
: > "$out/libraries.txt"
extra_dirs=()
for name in libnccl.so.2 libcublasLt.so.13 libcublasLt.so.12 libcublasLt.so.11; do
  path=$(awk -v n="$name" '$1 == n && $NF ~ /^\// { print $NF; exit }' <<<"$loader_cache")
  where="the loader's cache, ldconfig -p"
  if [[ -z $path ]]; then
    for i in "${!library_dirs[@]}"; do
      if [[ -e ${library_dirs[$i]}/$name ]]; then
        path=${library_dirs[$i]}/$name where=${library_sources[$i]}
        extra_dirs+=("${library_dirs[$i]}")
        break
      fi
    done
  fi
  [[ -n $path ]] && echo "$name $path (from $where)" >> "$out/libraries.txt"
done
searched="the loader's cache, ${#toolkit[@]} toolkit folders, the site-packages of ${#pythons[@]} python3"
grep -q '^libnccl\.so\.2 ' "$out/libraries.txt" ||
  echo "libnccl.so.2 not found (searched $searched): the NCCL cases skip" >> "$out/libraries.txt"
grep -q '^libcublasLt\.so\.' "$out/libraries.txt" ||
  echo "libcublasLt.so.13, .12 or .11 not found (searched $searched): the GEMM cases skip" >> "$out/libraries.txt"
if [[ ${#extra_dirs[@]} -gt 0 ]]; then
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(printf '%s\n' "${extra_dirs[@]}" | awk '!seen[$0]++' | paste -sd:)"
fi

# PyTorch, the references' python3: the first on PATH whose torch has CUDA.
# Asked once (importing torch takes seconds) and kept in env/torch.json.
torch_probe() {
  local py
  [[ -n $gpu_reason ]] && return
  for py in "${pythons[@]}"; do
    probe 20 "$py" -c 'import json, sys, torch
ok = torch.cuda.is_available()
print(json.dumps({"python": sys.executable, "torch": torch.__version__, "cuda": torch.version.cuda, "available": ok,
                  "nccl": ".".join(map(str, torch.cuda.nccl.version())) if ok else None}))
sys.exit(0 if ok else 1)' && return
  done
}
# Why PyTorch cannot give a reference here; empty when it can.
torch_reason() {
  [[ -n $gpu_reason ]] && { echo "$gpu_reason"; return; }
  ((${#pythons[@]} > 0)) || { echo "no python3 on this node"; return; }
  grep -q '"available": true' "$out/env/torch.json" 2>/dev/null ||
    echo "PyTorch with CUDA is not importable by any python3 on PATH (${pythons[*]})"
}
reference_python() { sed -n 's/.*"python": "\([^"]*\)".*/\1/p' "$out/env/torch.json"; }

# A section of gpu-results.md whose every row is one reason.
not_measured() {  # FILE TITLE REASON ROW...
  local file=$1 title=$2 reason=$3
  shift 3
  { echo "## $title"; echo
    echo "| what | perfgate | reference | ratio | noise | energy (median) |"
    echo "|---|---|---|---|---|---|"
    for row in "$@"; do echo "| $row | not measured: $reason | | | | |"; done
    echo; } > "$file"
}

# The rows of a section from the runs' JSON (scripts/gpu-proof-report.py);
# where python3 is missing, the runs' JSON stays and the section says so.
report() {  # FILE TITLE KIND ARG...
  local file=$1 title=$2
  shift 2
  if command -v python3 >/dev/null 2>&1; then
    bounded 30 2 python3 "$scripts/gpu-proof-report.py" --title "$title" "$@" > "$file" 2> "$file.log" && return
    not_measured "$file" "$title" "the report failed: $(tail -n 1 "$file.log")" "every row (raw JSON beside this file)"
  else
    not_measured "$file" "$title" "no python3 to tabulate the raw JSON" "every row (raw JSON beside this file)"
  fi
}

# Runs stage NAME (function stage_NAME DIR) unless OUTDIR/NAME/done exists,
# or, when fewer than NEED seconds of this call's budget are left, writes
# its section as not measured and leaves it for the next call.
incomplete=
stage() {  # NAME NEED TITLE
  local name=$1 dir=$out/$1
  if [[ -e $dir/done ]]; then
    log "$name: done in an earlier call, skipped"
    return
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  if [[ -z $gpu_reason ]] && (($(allow "$2" 0) < $2)); then
    incomplete=1
    not_measured "$dir/section.md" "$3" "this call's budget was spent first: run the same command again to resume" \
      "every row"
    log "$name: left for the next call (budget spent)"
    return
  fi
  local start=$SECONDS
  log "$name ..."
  "stage_$name" "$dir"
  echo $((SECONDS - start)) > "$dir/seconds"
  touch "$dir/done"
  log "$name: $((SECONDS - start)) s"
}

stage_env() {
  local d=$1
  date -u +%Y-%m-%dT%H:%M:%SZ > "$d/date"
  cp "$out/probe.txt" "$d/probe.txt"
  { echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"; cat "$out/libraries.txt"; } > "$d/cuda-libraries.txt"
  if ((smi_ok)); then
    probe 10 nvidia-smi -q > "$d/nvidia-smi-q.txt" 2>&1
    probe 5 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu \
      --format=csv > "$d/nvml-rest.csv" 2>&1
  fi
  torch_probe > "$d/torch.json" 2> "$d/torch.log" || echo '{"torch": null}' > "$d/torch.json"
  return 0
}

stage_gpu_tests() {
  local d=$1 t name stage_end=$((SECONDS + 60))
  local rows=()
  for t in "$tests"/*; do
    [[ -x $t ]] || continue
    name=$(basename "$t")
    # The binaries share the stage's 60 s: each gets what the ones before left.
    bounded $((stage_end - SECONDS)) 5 "$t" --gtest_output="json:$d/$name.json" > "$d/$name.log" 2>&1
    local rc=$? skipped passed
    # GoogleTest's summary lines: "[  PASSED  ] 3 tests." and "[  SKIPPED ] 21 tests, listed below:".
    passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$d/$name.log")
    skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\},.*/\1/p' "$d/$name.log")
    passed=${passed:-0} skipped=${skipped:-0}
    if stopped $rc; then
      fail "$d" "device tests: $name did not finish within the stage's 60 s (gpu_tests/$name.log)"
      rows+=("| $name | stopped at the stage's bound: see gpu_tests/$name.log | | | | |")
    elif [[ $rc -ne 0 ]]; then
      fail "$d" "device tests: $name (exit $rc, gpu_tests/$name.log)"
      rows+=("| $name | failed (exit $rc): see gpu_tests/$name.log | | | | |")
    elif [[ -n $gpu_reason ]]; then
      rows+=("| $name | not measured: $gpu_reason ($skipped skipped, $passed passed) | | | | |")
    else
      rows+=("| $name | $passed passed, $skipped skipped | | | | |")
    fi
  done
  [[ ${#rows[@]} -gt 0 ]] || rows=("| device tests | not measured: this bundle has no GPU test binaries (built without CUDA) | | | | |")
  { echo "## Device tests (ctest -L gpu)"; echo
    echo "| what | perfgate | reference | ratio | noise | energy (median) |"; echo "|---|---|---|---|---|---|"
    printf '%s\n' "${rows[@]}"; echo; } > "$d/section.md"
}

# The agent's run of a stage: cases for BOUND - 10 s (the agent stops
# starting cases there), SIGTERM at BOUND, SIGKILL 10 s after.
agent_run() {  # BOUND ARG...
  local t
  t=$(allow "$1" 10)
  ((t > 10)) || return 124
  timeout -k 10 "$t" "$agent" run --offline --time-budget "$((t - 10))s" "${@:2}"
}

stage_kernels() {
  local d=$1 monitor=
  # Without a GPU the cases skip at once, each with its reason in the JSON.
  if ((smi_ok)); then
    timeout -k 2 "$(allow 52 2)" nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
      --format=csv -lms 500 > "$d/nvml-load.csv" 2>&1 &
    monitor=$!
  fi
  agent_run 50 --suite kernels "${kernel_filters[@]}" --set dtype=fp32,tf32,fp16,bf16,fp8 \
    --output "$d/kernels.json" > "$d/kernels.log" 2>&1
  [[ -n $monitor ]] && { kill "$monitor" 2>/dev/null; wait "$monitor" 2>/dev/null; }
  if [[ -n $gpu_reason ]]; then
    not_measured "$d/section.md" "Kernels" "$gpu_reason" \
      "GEMM fp32/tf32/fp16/bf16/fp8 TFLOP/s at 4096³, 8192³, 4096×14336×4096, 8192×8192×28672" \
      "device copy GB/s, triad GB/s" "RMSNorm fraction of copy bandwidth" "energy per case (W, J, J/TFLOP)" \
      "NVML under load: clocks, throttle reasons, power"
    return
  fi
  local why
  why=$(torch_reason)
  if [[ -z $why ]]; then
    bounded 25 5 "$(reference_python)" "$scripts/gpu-reference.py" --iterations 20 > "$d/torch-kernels.json" \
      2> "$d/torch-kernels.log"
  fi
  ((smi_ok)) || echo "nvidia-smi does not answer here: NVML under load was not sampled" > "$d/nvml-load.txt"
  report "$d/section.md" "Kernels" --perfgate "$d/kernels.json" --reference "$d/torch-kernels.json" \
    --no-reference "${why:-}" --nvml "$d/nvml-load.csv"
}

stage_model() {
  local d=$1
  agent_run 80 --suite training --suite inference --filter '*backend=cuda*' \
    --output "$d/model.json" > "$d/model.log" 2>&1
  if [[ -n $gpu_reason ]]; then
    not_measured "$d/section.md" "Training step and inference" "$gpu_reason" \
      "training step small, large: ms, tokens/s, MFU" "prefill time to first token" \
      "decode time per output token at batch 1, 8, 64 (CUDA graph; eager reference)" \
      "serving under load (inference/serve): TTFT and TPOT percentiles, goodput, preemptions" \
      "energy per case (W, J/token)"
    return
  fi
  local why preset kind py refs_end=$((SECONDS + 40))
  why=$(torch_reason)
  if [[ -z $why ]]; then
    py=$(reference_python)
    # The four references share 40 s: each imports torch and builds its model.
    for preset in small large; do
      for kind in train decode; do
        bounded $((refs_end - SECONDS)) 5 "$py" "$scripts/model-reference.py" "$kind" --preset "$preset" \
          > "$d/torch-$kind-$preset.json" 2>> "$d/torch.log"
      done
    done
  fi
  report "$d/section.md" "Training step and inference" --perfgate "$d/model.json" \
    --model-reference "$d" --no-reference "${why:-}"
}

stage_collectives() {
  local d=$1 sizes=1048576,16777216,268435456
  agent_run 20 --suite collectives --set backend=nccl --set "bytes=$sizes" --gpus "$gpu_count" \
    --output "$d/collectives.json" > "$d/collectives.log" 2>&1
  if [[ -n $gpu_reason ]]; then
    not_measured "$d/section.md" "Collectives" "$gpu_reason" \
      "all_reduce, all_gather, reduce_scatter busbw (NCCL) beside torch.distributed"
    return
  fi
  local why
  why=$(torch_reason)
  if [[ -z $why && $gpu_count -lt 2 ]]; then why="torch.distributed needs two or more GPUs ($gpu_count here)"; fi
  if [[ -z $why ]]; then
    bounded 25 5 "$(reference_python)" "$scripts/collectives-reference.py" --gpus "$gpu_count" --bytes "$sizes" \
      > "$d/torch-collectives.json" 2> "$d/torch-collectives.log"
  fi
  report "$d/section.md" "Collectives" --perfgate "$d/collectives.json" \
    --reference "$d/torch-collectives.json" --no-reference "${why:-}"
}

stage_ab() {
  local d=$1 run rc t
  for run in aa1 aa2 slow; do
    local candidate=$agent
    [[ $run == slow ]] && candidate="env PERFGATE_INJECT_SLOWDOWN=$bf16_gemm=5 $agent"
    # Each round starts a process (a CUDA context, cuBLASLt's heuristics) per
    # side: 35 s a case, 40 s of cases, SIGTERM at 50 s, SIGKILL 10 s later.
    t=$(allow 50 10)
    if ((t > 10)); then
      timeout -k 10 "$t" "$agent" ab --offline --baseline "$agent" --candidate "$candidate" --suite kernels \
        --filter "$bf16_gemm" --policy "$policy" --case-budget $((t - 15 < 35 ? t - 15 : 35)) \
        --time-budget "$((t - 10))s" --json "$d/$run.json" --markdown "$d/$run.md" > "$d/$run.log" 2>&1
      rc=$?
    else
      rc=124
    fi
    echo "$rc" > "$d/$run.exit"
    [[ -n $gpu_reason ]] && continue  # the cases skipped: nothing was judged
    if grep -q '"verdicts": \[\]' "$d/$run.json" 2>/dev/null || [[ ! -s $d/$run.json ]]; then
      fail "$d" "A/B: $run judged no metric (exit $rc; see ab/$run.log)"
      continue
    fi
    if [[ $run == slow && $rc -ne 1 ]]; then fail "$d" "A/B: the 5 % slowdown was not caught (exit $rc)"; fi
    if [[ $run != slow && $rc -ne 0 ]]; then fail "$d" "A/B: A/A $run did not pass (exit $rc)"; fi
  done
  if [[ -n $gpu_reason ]]; then
    not_measured "$d/section.md" "A/B: the gate on this card" "$gpu_reason" \
      "A/A run 1 (same build, must pass)" "A/A run 2 (same build, must pass)" \
      "5 % slowdown injected into $bf16_gemm (must be caught)"
    return
  fi
  report "$d/section.md" "A/B: the gate on this card" --ab "$d"
}

# The GPU counters of the bf16 GEMM and the device copy under Nsight
# Compute (docs/statistics.md, "Counts on the GPU"): an A/A of counts, one
# counted process a side, which must pass, and the counts themselves.
stage_counts() {
  local d=$1 t rc ncu_cmd
  # On PATH, else in the toolkit beside its library folders (lib64/../bin).
  ncu_cmd=$(command -v ncu)
  for lib in "${toolkit[@]}"; do
    [[ -z $ncu_cmd && -x ${lib%/lib64}/bin/ncu ]] && ncu_cmd=${lib%/lib64}/bin/ncu
  done
  local why=$gpu_reason
  [[ -z $why && -z $ncu_cmd ]] && why="no Nsight Compute (ncu) on this node (PATH, the toolkit's bin)"
  if [[ -n $why ]]; then
    not_measured "$d/section.md" "Counts on the GPU (ncu)" "$why" \
      "A/A of gpu_instructions, gpu_dram_bytes, gpu_achieved_occupancy for $bf16_gemm and the device copy"
    return
  fi
  t=$(allow 50 10)
  if ((t > 10)); then
    timeout -k 10 "$t" "$agent" ab --offline --count gpu --count-only --ncu "$ncu_cmd" --baseline "$agent" \
      --candidate "$agent" --suite kernels --filter "$bf16_gemm" --filter 'kernels/device_copy*' \
      --policy "$policy" --json "$d/aa.json" --markdown "$d/aa.md" > "$d/aa.log" 2>&1
    rc=$?
  else
    rc=124
  fi
  echo "$rc" > "$d/aa.exit"
  [[ $rc -eq 0 ]] || fail "$d" "counts: the A/A of counts did not pass (exit $rc; see counts/aa.log)"
  report "$d/section.md" "Counts on the GPU (ncu)" --counts "$d"
}

# NAME, the seconds it needs to start, its section's title.
stage env 20 "Environment"
stage gpu_tests 30 "Device tests (ctest -L gpu)"
stage kernels 40 "Kernels"
stage model 60 "Training step and inference"
stage collectives 20 "Collectives"
stage ab 60 "A/B: the gate on this card"
stage counts 40 "Counts on the GPU (ncu)"

# gpu-results.md: the header, then each stage's section.
failed=$(cat "$out"/failed "$out"/*/failed 2>/dev/null)
{
  echo "# GPU results"; echo
  echo "- date: $(cat "$out/env/date" 2>/dev/null)"
  echo "- bundle: $(cat "$top/share/perfgate/version" 2>/dev/null)"
  if [[ -n $gpu_reason ]]; then
    echo "- device: none measured ($gpu_reason)"
  elif ((smi_ok)); then
    echo "- device, driver: $(probe 10 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1) ($gpu_count GPUs; $found_by)"
  else
    echo "- device: $(sed -n 's/^gpu 0: //p' "$out/probe.txt" | head -n 1) ($gpu_count GPUs; $found_by; $smi_note)"
  fi
  grep -E '^ *(cuda_driver|cuda_runtime|cublas|nccl|cudnn|gpu_counters):' "$out/env/probe.txt" 2>/dev/null | sed 's/^ */- /'
  sed 's/^/- library: /' "$out/libraries.txt"
  [[ -s $out/env/torch.json ]] && echo "- PyTorch: $(cat "$out/env/torch.json")"
  echo "- raw JSON and logs: the stage folders beside this file"
  echo
  echo "## NVML at rest"; echo
  if [[ -n $gpu_reason ]]; then
    echo "not measured: $gpu_reason"
  else
    # The probe's readings before any case ran (env/probe.txt, run details).
    grep -E '^ *gpu[0-9]+\.(sm_clock_mhz|mem_clock_mhz|power_usage_mw|total_energy_mj|temperature_c|pstate|clocks_event_reasons):' \
      "$out/env/probe.txt" | sed 's/^ */- /' | grep . ||
      echo "not measured: the probe has no NVML reading (env/probe.txt says why)"
  fi
  echo
  for s in gpu_tests kernels model collectives ab counts; do cat "$out/$s/section.md" 2>/dev/null; done
  if [[ -n $failed ]]; then
    echo "## Checks that failed"; echo
    sed 's/^/- /' <<<"$failed"
  fi
  [[ -z $incomplete ]] || { echo; echo "Incomplete: this call's budget ran out; run the same command again to resume."; }
} > "$out/gpu-results.md"
log "wrote $out/gpu-results.md"
[[ -z $failed ]] || { sed 's/^/perfgate-gpu-proof: failed: /' <<<"$failed" >&2; exit 1; }
[[ -z $incomplete ]] || { log "incomplete: run the same command again to resume"; exit 3; }
exit 0
