#!/usr/bin/env bash
# bin/perfgate-agent of the bundle (scripts/bundle.sh puts it there and the
# agent itself in libexec/perfgate/). The agent opens NCCL and cuBLASLt at
# run time (dlopen); run directly on a node, it finds them wherever the node
# keeps them: libexec/perfgate/runtime-libs.sh --search looks in
# LD_LIBRARY_PATH, the loader's cache, the CUDA toolkit and the site-packages
# of every python3 on PATH. The folders of those found elsewhere than the
# first two go on LD_LIBRARY_PATH, after what is there (they hold CUDA's
# libraries only, so none shadows one of the bundle's), and each library's
# origin, or its absence, goes to the agent in PERFGATE_GPU_LIBRARIES (lines
# joined by ';'), which it records in the run's details.
# An agent started by one that came through here (ab runs its sides as
# agents) inherits both variables: it is not searched for again.
set -euo pipefail
top=$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)
if [[ -n ${PERFGATE_GPU_LIBRARIES:-} ]]; then exec "$top/libexec/perfgate/perfgate-agent" "$@"; fi
found=$("$top/libexec/perfgate/runtime-libs.sh" --search)
extra=()
while read -r line; do
  if [[ $line =~ ^[^\ ]+\ (/.*)/[^/]+\ \(from\ (.*)\)$ ]]; then
    case ${BASH_REMATCH[2]} in
      LD_LIBRARY_PATH | "the loader's cache"*) ;;
      *) extra+=("${BASH_REMATCH[1]}") ;;
    esac
  fi
done <<<"$found"
if [[ ${#extra[@]} -gt 0 ]]; then
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(printf '%s\n' "${extra[@]}" | awk '!seen[$0]++' | paste -sd:)"
fi
PERFGATE_GPU_LIBRARIES=$(paste -sd';' <<<"$found")
export PERFGATE_GPU_LIBRARIES
exec "$top/libexec/perfgate/perfgate-agent" "$@"
