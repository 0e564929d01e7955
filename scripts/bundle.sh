#!/usr/bin/env bash
# The bundle for air-gapped GPU nodes: one archive with the agent, the CLI,
# the coordinator, the GPU test binaries (those `ctest -L gpu` runs), the
# reference scripts and `bin/perfgate-gpu-proof`, plus every shared library
# they need beyond glibc, the C++ runtime, the NVIDIA driver and the CUDA
# toolkit (scripts/runtime-libs.sh, the rule perfgate's images use too).
# Binaries find those libraries through an RPATH relative to themselves
# ($ORIGIN), so nothing needs LD_LIBRARY_PATH. NCCL and cuBLASLt, which the
# agent opens at run time, come from the node: bin/perfgate-agent
# (scripts/agent-start.sh) finds them and starts the agent, which lies in
# libexec/perfgate/.
#
#   scripts/bundle.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR is a finished CMake build (the targets perfgate-agent, perfgate,
# perfgate-coordinator and, where CUDA was found, the GPU tests). Writes
# OUT_DIR/perfgate-<version>-linux-x86_64.tar.xz (OUT_DIR defaults to
# BUILD_DIR), prints its path and size, and fails when it exceeds
# $PERFGATE_BUNDLE_MAX_MIB (default 40) compressed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ $# -ge 1 && $# -le 2 ]] || { echo "usage: $0 BUILD_DIR [OUT_DIR]" >&2; exit 2; }
build=$(cd "$1" && pwd)
out=$(mkdir -p "${2:-$build}" && cd "${2:-$build}" && pwd)
max_mib=${PERFGATE_BUNDLE_MAX_MIB:-40}
for tool in patchelf xz strip; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is missing (scripts/install-deps.sh installs it)" >&2; exit 2; }
done

version=$(sed -n 's/^project(perfgate VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
name=perfgate-$version-linux-x86_64
stage=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-bundle-XXXXXX")
trap 'rm -rf "$stage"' EXIT
top=$stage/$name
mkdir -p "$top/bin" "$top/lib" "$top/libexec/perfgate/tests" "$top/share/perfgate/scripts"

for b in agent/perfgate-agent cli/perfgate coordinator/perfgate-coordinator; do
  [[ -x $build/$b ]] || { echo "$0: $build/$b is missing: build it first" >&2; exit 2; }
done
cp "$build/cli/perfgate" "$build/coordinator/perfgate-coordinator" "$top/bin/"
cp "$build/agent/perfgate-agent" "$top/libexec/perfgate/"
cp "$root/scripts/agent-start.sh" "$top/bin/perfgate-agent"
cp "$root/scripts/runtime-libs.sh" "$top/libexec/perfgate/"
# The device tests, as CTest knows them: every test binary labelled gpu.
# Where CUDA was not found there are fewer (or none); the proof says so.
gpu_tests=$(cd "$build" && ctest -N -L gpu --show-only=json-v1 |
  python3 -c 'import json, sys, os
seen = set()
for t in json.load(sys.stdin)["tests"]:
    exe = t["command"][0]
    if exe not in seen:
        seen.add(exe)
        print(exe)')
for t in $gpu_tests; do cp "$t" "$top/libexec/perfgate/tests/"; done

cp "$root/scripts/gpu-proof.sh" "$top/bin/perfgate-gpu-proof"
cp "$root/scripts/gpu-reference.py" "$root/scripts/model-reference.py" \
   "$root/scripts/collectives-reference.py" "$root/scripts/gpu-proof-report.py" "$top/share/perfgate/scripts/"
cp "$root/deploy/policy/default.yaml" "$top/share/perfgate/policy.yaml"
cp "$root/docs/gpu-results.md" "$top/share/perfgate/"
echo "$version $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" > "$top/share/perfgate/version"

binaries=("$top"/bin/perfgate "$top"/libexec/perfgate/perfgate-agent "$top"/bin/perfgate-coordinator)
for t in "$top"/libexec/perfgate/tests/*; do [[ -e $t ]] && binaries+=("$t"); done
libs=$("$root/scripts/runtime-libs.sh" "${binaries[@]}")
while read -r soname path; do
  if [[ -n $soname ]]; then cp -L "$path" "$top/lib/$soname"; fi
done <<<"$libs"

# Symbols are not needed to run; the libraries find each other in lib/.
strip --strip-unneeded "${binaries[@]}" "$top"/lib/*
for b in "$top"/bin/perfgate "$top"/bin/perfgate-coordinator; do
  patchelf --set-rpath '$ORIGIN/../lib' "$b"
done
patchelf --set-rpath '$ORIGIN/../../lib' "$top/libexec/perfgate/perfgate-agent"
for t in "$top"/libexec/perfgate/tests/*; do
  [[ -e $t ]] && patchelf --set-rpath '$ORIGIN/../../../lib' "$t"
done
for l in "$top"/lib/*; do patchelf --set-rpath '$ORIGIN' "$l"; done

archive=$out/$name.tar.xz
tar -C "$stage" --owner=0 --group=0 --sort=name -cf - "$name" | xz -T0 -3 > "$archive.part"
mv "$archive.part" "$archive"
bytes=$(stat -c %s "$archive")
mib=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
echo "$archive"
echo "size: $mib MiB compressed ($bytes bytes; limit $max_mib MiB), $(ls "$top/lib" | wc -l) libraries, $(ls "$top/libexec/perfgate/tests" | wc -l) GPU test binaries"
if (( bytes > max_mib * 1048576 )); then
  echo "$0: the bundle is larger than $max_mib MiB" >&2
  exit 1
fi
