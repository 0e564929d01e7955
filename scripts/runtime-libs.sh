#!/usr/bin/env bash
# Which shared libraries perfgate ships beside its binaries: the one rule
# behind both perfgate's images (deploy/docker/build.sh) and the bundle for
# air-gapped nodes (scripts/bundle.sh).
#
#   scripts/runtime-libs.sh BINARY...
#   scripts/runtime-libs.sh --search
#
# With BINARY: prints "SONAME PATH" for every library ldd resolves for the binaries that
# a target system is not expected to provide, one a line, sorted. Left out:
# glibc and the dynamic loader, the C++ runtime (libstdc++, libgcc_s), the
# NVIDIA driver's libraries (libcuda, libnvidia-*) and the CUDA toolkit's
# (anything under /usr/local/cuda). Exits 2, naming the binary and the
# library, when ldd cannot find one on this machine.
#
# With --search (the bundle's bin/perfgate-agent runs it on the node): where
# this node keeps the libraries the agent opens at run time (dlopen), NCCL
# (libnccl.so.2) and cuBLASLt (libcublasLt.so.13, .12 or .11), one line each:
# "NAME PATH (from ORIGIN)", or "NAME not found (searched ...)". Searched in
# this order: LD_LIBRARY_PATH, the loader's cache (ldconfig -p), the CUDA
# toolkit's folders ($PERFGATE_CUDA_DIRS, colon-separated; default
# $CUDA_HOME/lib64 and /usr/local/cuda's), and PyTorch's wheels in the
# site-packages of every python3 on PATH (nvidia/*/lib, torch/lib). The
# first two are where the loader looks anyway; a library found in one of
# the others needs its folder put on LD_LIBRARY_PATH.
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: $0 BINARY... | --search" >&2; exit 2; }

# Every python3 on PATH, as found (links not resolved: a virtual
# environment's is a link to the system's, yet has site-packages of its own).
pythons() {
  (IFS=:; for d in $PATH; do ls -d "$d"/python3 "$d"/python3.[0-9]* 2>/dev/null || true; done) |
    grep -E '/python3(\.[0-9]+)?$' | awk '!seen[$0]++' | while read -r py; do [[ -x $py ]] && echo "$py"; done
  return 0
}

# The CUDA toolkit's folders there are, one a line.
toolkit_dirs() {
  local d
  local -a dirs
  IFS=: read -ra dirs <<<"${PERFGATE_CUDA_DIRS:-${CUDA_HOME:+$CUDA_HOME/lib64:}/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib}"
  for d in "${dirs[@]}"; do [[ -d $d ]] && echo "$d"; done
  return 0
}

# The nvidia/*/lib and torch/lib folders of every python3's site-packages,
# one a line: "DIR\tthe site-packages of PYTHON". A python3 that hangs is
# given up on after 5 s.
wheel_dirs() {
  local py
  pythons | while read -r py; do
    timeout -k 1 5 "$py" -c 'import glob, os, site
paths = site.getsitepackages() + [site.getusersitepackages()]
for p in paths:
    for d in sorted(glob.glob(os.path.join(p, "nvidia", "*", "lib"))) + [os.path.join(p, "torch", "lib")]:
        if os.path.isdir(d):
            print(d)' 2>/dev/null </dev/null | sed "s|\$|\tthe site-packages of $py|" || true
  done
  return 0
}

# "PATH\tORIGIN" of the first folder of `dirs` ("DIR\tORIGIN" lines) holding NAME.
first_in() {
  local name=$1 dir origin
  while IFS=$'\t' read -r dir origin; do
    if [[ -n $dir && -e $dir/$name ]]; then printf '%s\t%s\n' "$dir/$name" "$origin"; return 0; fi
  done <<<"$2"
  return 0
}

# The --search report (see the top of this file). Each name is looked for
# where the loader looks (LD_LIBRARY_PATH, its cache), then in the toolkit;
# the python3s are asked only when a name is in none of those, once.
search() {
  local ldconfig_bin cache ld toolkit wheels= asked= family name hit d searched
  local -a dirs
  ldconfig_bin=$(command -v ldconfig || echo /sbin/ldconfig)
  cache=$(timeout -k 1 5 "$ldconfig_bin" -p 2>/dev/null </dev/null || true)
  IFS=: read -ra dirs <<<"${LD_LIBRARY_PATH:-}"
  ld=$(for d in "${dirs[@]}"; do [[ -n $d ]] && printf '%s\tLD_LIBRARY_PATH\n' "$d"; done; true)
  toolkit=$(toolkit_dirs | sed 's/$/\tthe CUDA toolkit/')
  searched="LD_LIBRARY_PATH, the loader's cache, $(grep -c . <<<"$toolkit" || true) CUDA toolkit folders, the site-packages of $(pythons | grep -c . || true) python3 on PATH"
  for family in "libnccl.so.2" "libcublasLt.so.13 libcublasLt.so.12 libcublasLt.so.11"; do
    hit=
    for name in $family; do
      hit=$(first_in "$name" "$ld")
      [[ -n $hit ]] || hit=$(awk -v n="$name" '$1 == n && $NF ~ /^\// { print $NF "\tthe loader'"'"'s cache, ldconfig -p"; exit }' <<<"$cache")
      [[ -n $hit ]] || hit=$(first_in "$name" "$toolkit")
      if [[ -z $hit ]]; then
        [[ -n $asked ]] || { wheels=$(wheel_dirs | awk -F'\t' '!seen[$1]++'); asked=1; }
        hit=$(first_in "$name" "$wheels")
      fi
      if [[ -n $hit ]]; then
        echo "$name ${hit%%$'\t'*} (from ${hit#*$'\t'})"
        break
      fi
    done
    [[ -n $hit ]] || echo "${family%% *} not found (searched $searched)"
  done
}

if [[ $1 == --search ]]; then
  search
  exit 0
fi

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
