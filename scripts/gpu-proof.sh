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
# Then OUTDIR/gpu-results.md: one table per stage, every figure beside its
# reference and their ratio, and the raw JSON of every run beside it.
#
# Without a GPU every stage writes its files with "not measured: <reason>"
# in under two minutes, and the command exits 0. With one it exits 1 when a
# check failed (a device test, an A/A gate, the injected slowdown missed).
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

# Why nothing can be measured on a GPU here; empty when a GPU is there.
no_gpu_reason() {
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "no NVIDIA driver on this node: nvidia-smi not found"
  elif ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    echo "no GPU: nvidia-smi -L lists none"
  fi
}
gpu_reason=$(no_gpu_reason)
gpu_count=0
[[ -z $gpu_reason ]] && gpu_count=$(nvidia-smi -L | grep -c '^GPU ')

# cuBLASLt and NCCL, which the CUDA cases load at run time, come from the
# node: the CUDA toolkit's lib64 and PyTorch's wheels (site-packages/nvidia/
# */lib) are searched after the system's own paths. They hold CUDA's
# libraries only, so none shadows one of the bundle's.
cuda_dirs=()
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
  [[ -d $d ]] && cuda_dirs+=("$d")
done
if command -v python3 >/dev/null 2>&1; then
  while read -r d; do [[ -n $d ]] && cuda_dirs+=("$d"); done < <(python3 -c 'import glob, os, site
for p in site.getsitepackages() + [site.getusersitepackages()]:
    print("\n".join(sorted(glob.glob(os.path.join(p, "nvidia", "*", "lib")))))' 2>/dev/null)
fi
if [[ ${#cuda_dirs[@]} -gt 0 ]]; then
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(IFS=:; echo "${cuda_dirs[*]}")"
fi

# Why PyTorch cannot give a reference here; empty when it can.
torch_reason() {
  [[ -n $gpu_reason ]] && { echo "$gpu_reason"; return; }
  command -v python3 >/dev/null 2>&1 || { echo "no python3 on this node"; return; }
  python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' >/dev/null 2>&1 ||
    echo "PyTorch with CUDA is not importable by python3"
}

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
    python3 "$scripts/gpu-proof-report.py" --title "$title" "$@" > "$file" 2> "$file.log" && return
    not_measured "$file" "$title" "the report failed: $(tail -n 1 "$file.log")" "every row (raw JSON beside this file)"
  else
    not_measured "$file" "$title" "no python3 to tabulate the raw JSON" "every row (raw JSON beside this file)"
  fi
}

# Runs stage NAME (function stage_NAME DIR) unless OUTDIR/NAME/done exists.
stage() {
  local name=$1 dir=$out/$1
  if [[ -e $dir/done ]]; then
    log "$name: done in an earlier call, skipped"
    return
  fi
  rm -rf "$dir" && mkdir -p "$dir"
  local start=$SECONDS
  log "$name ..."
  "stage_$name" "$dir"
  echo $((SECONDS - start)) > "$dir/seconds"
  touch "$dir/done"
  log "$name: $((SECONDS - start)) s"
}

stage_env() {
  local d=$1 lib_dir
  date -u +%Y-%m-%dT%H:%M:%SZ > "$d/date"
  timeout 60 "$agent" probe > "$d/probe.txt" 2>&1
  { echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
    for lib_dir in "${cuda_dirs[@]}"; do
      ls "$lib_dir" 2>/dev/null | grep -E '^lib(cublasLt|nccl)\.so' | sed "s|^|$lib_dir/|"
    done
  } > "$d/cuda-libraries.txt"
  if [[ -z $gpu_reason ]]; then
    timeout 60 nvidia-smi -q > "$d/nvidia-smi-q.txt" 2>&1
    timeout 30 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,power.draw,temperature.gpu \
      --format=csv > "$d/nvml-rest.csv" 2>&1
  fi
  if command -v python3 >/dev/null 2>&1; then
    timeout 60 python3 -c 'import json, torch
print(json.dumps({"torch": torch.__version__, "cuda": torch.version.cuda,
                  "nccl": ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else None}))' \
      > "$d/torch.json" 2>/dev/null || echo '{"torch": null}' > "$d/torch.json"
  fi
  return 0
}

stage_gpu_tests() {
  local d=$1 t name
  local rows=()
  for t in "$tests"/*; do
    [[ -x $t ]] || continue
    name=$(basename "$t")
    timeout 150 "$t" --gtest_output="json:$d/$name.json" > "$d/$name.log" 2>&1
    local rc=$? skipped passed
    # GoogleTest's summary lines: "[  PASSED  ] 3 tests." and "[  SKIPPED ] 21 tests, listed below:".
    passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$d/$name.log")
    skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\},.*/\1/p' "$d/$name.log")
    passed=${passed:-0} skipped=${skipped:-0}
    if [[ $rc -ne 0 ]]; then
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

stage_kernels() {
  local d=$1 monitor=
  # Without a GPU the cases skip at once, each with its reason in the JSON.
  if [[ -z $gpu_reason ]]; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
      --format=csv -lms 500 > "$d/nvml-load.csv" 2>&1 &
    monitor=$!
  fi
  timeout 170 "$agent" run --offline --suite kernels "${kernel_filters[@]}" --set dtype=fp32,tf32,fp16,bf16,fp8 \
    --time-budget 150s --output "$d/kernels.json" > "$d/kernels.log" 2>&1
  [[ -n $monitor ]] && kill "$monitor" 2>/dev/null
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
    timeout 100 python3 "$scripts/gpu-reference.py" --iterations 20 > "$d/torch-kernels.json" 2> "$d/torch-kernels.log"
  fi
  report "$d/section.md" "Kernels" --perfgate "$d/kernels.json" --reference "$d/torch-kernels.json" \
    --no-reference "${why:-}" --nvml "$d/nvml-load.csv"
}

stage_model() {
  local d=$1
  timeout 170 "$agent" run --offline --suite training --suite inference --filter '*backend=cuda*' \
    --time-budget 150s --output "$d/model.json" > "$d/model.log" 2>&1
  if [[ -n $gpu_reason ]]; then
    not_measured "$d/section.md" "Training step and inference" "$gpu_reason" \
      "training step small, large: ms, tokens/s, MFU" "prefill time to first token" \
      "decode time per output token at batch 1, 8, 64 (CUDA graph; eager reference)" \
      "serving under load (inference/serve): TTFT and TPOT percentiles, goodput, preemptions" \
      "energy per case (W, J/token)"
    return
  fi
  local why preset
  why=$(torch_reason)
  if [[ -z $why ]]; then
    for preset in small large; do
      timeout 45 python3 "$scripts/model-reference.py" train --preset "$preset" > "$d/torch-train-$preset.json" 2>> "$d/torch.log"
      timeout 45 python3 "$scripts/model-reference.py" decode --preset "$preset" > "$d/torch-decode-$preset.json" 2>> "$d/torch.log"
    done
  fi
  report "$d/section.md" "Training step and inference" --perfgate "$d/model.json" \
    --model-reference "$d" --no-reference "${why:-}"
}

stage_collectives() {
  local d=$1 sizes=1048576,16777216,268435456
  timeout 75 "$agent" run --offline --suite collectives --set backend=nccl --set "bytes=$sizes" \
    --gpus "$gpu_count" --time-budget 60s --output "$d/collectives.json" > "$d/collectives.log" 2>&1
  if [[ -n $gpu_reason ]]; then
    not_measured "$d/section.md" "Collectives" "$gpu_reason" \
      "all_reduce, all_gather, reduce_scatter busbw (NCCL) beside torch.distributed"
    return
  fi
  local why
  why=$(torch_reason)
  if [[ -z $why && $gpu_count -lt 2 ]]; then why="torch.distributed needs two or more GPUs ($gpu_count here)"; fi
  if [[ -z $why ]]; then
    timeout 60 python3 "$scripts/collectives-reference.py" --gpus "$gpu_count" --bytes "$sizes" \
      > "$d/torch-collectives.json" 2> "$d/torch-collectives.log"
  fi
  report "$d/section.md" "Collectives" --perfgate "$d/collectives.json" \
    --reference "$d/torch-collectives.json" --no-reference "${why:-}"
}

stage_ab() {
  local d=$1 run rc
  for run in aa1 aa2 slow; do
    local candidate=$agent
    [[ $run == slow ]] && candidate="env PERFGATE_INJECT_SLOWDOWN=$bf16_gemm=5 $agent"
    timeout 50 "$agent" ab --offline --baseline "$agent" --candidate "$candidate" --suite kernels \
      --filter "$bf16_gemm" --policy "$policy" --case-budget 30 --time-budget 35s --json "$d/$run.json" --markdown "$d/$run.md" \
      > "$d/$run.log" 2>&1
    rc=$?
    echo "$rc" > "$d/$run.exit"
    [[ -n $gpu_reason ]] && continue  # the cases skipped: nothing was judged
    if grep -q '"verdicts": \[\]' "$d/$run.json" 2>/dev/null || [[ ! -s $d/$run.json ]]; then
      fail "$d" "A/B: $run judged no metric (see ab/$run.log)"
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

stage env
stage gpu_tests
stage kernels
stage model
stage collectives
stage ab

# gpu-results.md: the header, then each stage's section.
failed=$(cat "$out"/*/failed 2>/dev/null)
{
  echo "# GPU results"; echo
  echo "- date: $(cat "$out/env/date" 2>/dev/null)"
  echo "- bundle: $(cat "$top/share/perfgate/version" 2>/dev/null)"
  if [[ -n $gpu_reason ]]; then
    echo "- device: none ($gpu_reason)"
  else
    echo "- device, driver: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1) ($gpu_count GPUs)"
  fi
  grep -E '^ *(cuda_driver|cuda_runtime|cublas|nccl|cudnn):' "$out/env/probe.txt" 2>/dev/null | sed 's/^ */- /'
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
  for s in gpu_tests kernels model collectives ab; do cat "$out/$s/section.md" 2>/dev/null; done
  if [[ -n $failed ]]; then
    echo "## Checks that failed"; echo
    sed 's/^/- /' <<<"$failed"
  fi
} > "$out/gpu-results.md"
log "wrote $out/gpu-results.md"
[[ -z $failed ]] || { sed 's/^/perfgate-gpu-proof: failed: /' <<<"$failed" >&2; exit 1; }
exit 0
