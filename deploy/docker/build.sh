#!/usr/bin/env bash
# Builds perfgate's agent or coordinator image from a finished CMake build:
#
#   deploy/docker/build.sh [--base IMAGE] agent|coordinator BUILD_DIR TAG [ENGINE-BUILD-FLAG...]
#
# The base is the one bases.env pins, unless --base names another (pinned
# by digest too: REPO@sha256:...). The build context, made in a temporary
# folder, holds the Containerfile's inputs only: bin/ with the binaries and
# lib/ with the shared libraries ldd finds for them, less those the base
# provides (scripts/runtime-libs.sh: the C and C++ runtimes, libcuda and
# the NVIDIA driver's, and the CUDA toolkit's, which NVIDIA's image
# carries). The engine is podman, or $PERFGATE_CONTAINER_ENGINE. Flags after TAG go to `ENGINE build`.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
engine=${PERFGATE_CONTAINER_ENGINE:-podman}

usage() { echo "usage: $0 [--base IMAGE@sha256:...] agent|coordinator BUILD_DIR TAG [ENGINE-BUILD-FLAG...]" >&2; exit 2; }
base=
if [[ ${1:-} == --base ]]; then
  [[ $# -ge 2 ]] || usage
  base=$2
  shift 2
fi
[[ $# -ge 3 ]] || usage
image=$1 build_dir=$2 tag=$3
shift 3

# bases.env is KEY=VALUE lines; read, never sourced, so that it runs nothing.
pinned() {
  sed -n "s/^$1=\(.*\)\$/\1/p" "$here/bases.env" | tail -n 1
}
case $image in
  agent) binaries=(agent/perfgate-agent); [[ -n $base ]] || base=$(pinned AGENT_BASE) ;;
  coordinator) binaries=(coordinator/perfgate-coordinator cli/perfgate); [[ -n $base ]] || base=$(pinned COORDINATOR_BASE) ;;
  *) usage ;;
esac
if ! [[ $base =~ @sha256:[0-9a-f]{64}$ ]]; then
  echo "$0: base '$base' is not pinned by digest (REPO@sha256:<64 hex digits>)" >&2
  exit 2
fi

ctx=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-image-XXXXXX")
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/bin" "$ctx/lib"
for b in "${binaries[@]}"; do
  [[ -x $build_dir/$b ]] || { echo "$0: $build_dir/$b is missing: build it first" >&2; exit 2; }
  cp "$build_dir/$b" "$ctx/bin/"
done

# The libraries the base does not provide (glibc, the C++ runtime, the
# driver, the toolkit): scripts/runtime-libs.sh, the rule the bundle uses too.
libs=$("$here/../../scripts/runtime-libs.sh" "$ctx"/bin/*)
while read -r name path; do
  if [[ -n $name ]]; then cp -L "$path" "$ctx/lib/$name"; fi
done <<<"$libs"
cp "$here/$image.Containerfile" "$ctx/Containerfile"

"$engine" build --build-arg "BASE=$base" -f "$ctx/Containerfile" -t "$tag" "$@" "$ctx"
