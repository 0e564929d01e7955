#!/usr/bin/env bash
# Which shared libraries perfgate ships beside its binaries: the one rule
# behind both perfgate's images (deploy/docker/build.sh) and the bundle for
# air-gapped nodes (scripts/bundle.sh).
#
#   scripts/runtime-libs.sh BINARY...
#
# Prints "SONAME PATH" for every library ldd resolves for the binaries that
# a target system is not expected to provide, one a line, sorted. Left out:
# glibc and the dynamic loader, the C++ runtime (libstdc++, libgcc_s), the
# NVIDIA driver's libraries (libcuda, libnvidia-*) and the CUDA toolkit's
# (anything under /usr/local/cuda). Exits 2, naming the binary and the
# library, when ldd cannot find one on this machine.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 BINARY..." >&2; exit 2; }

provided='^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libresolv|libutil|libstdc\+\+|libgcc_s|libcuda|libnvidia-)[.-]'
for b in "$@"; do
  deps=$(ldd "$b") || { echo "$0: ldd cannot read $b" >&2; exit 2; }
  if grep -q 'not found' <<<"$deps"; then
    echo "$0: $b needs libraries this machine lacks:" >&2
    grep 'not found' <<<"$deps" >&2
    exit 2
  fi
  awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$deps"
done | sort -u | while read -r name path; do
  if [[ $name =~ $provided || $path == /usr/local/cuda* ]]; then continue; fi
  echo "$name $path"
done
