#!/usr/bin/env bash
# Installs the Debian 12 packages perfgate builds and tests with, skipping
# those already present. Runs apt-get as root, or through sudo.
set -euo pipefail

packages=(
  g++ cmake make ninja-build pkg-config git ca-certificates ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libpqxx-dev libpq-dev libssl-dev libopenblas-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libboost-math-dev libgloo-dev
  postgresql postgresql-contrib slurm-wlm munge
  openssl
  # Containers: podman runs perfgate's images by digest, a local registry
  # serves them; buildah and skopeo are what podman builds and copies with.
  podman runc buildah skopeo debootstrap docker-registry podman-compose
  # The bundle for air-gapped nodes (scripts/bundle.sh): RPATHs set to
  # $ORIGIN, the archive compressed with xz.
  patchelf xz-utils
  # The coordinator's HTTP side; the dashboard's uPlot and the browser
  # tests' playwright-core come from npm (lockfiles in the repository), the
  # browser from Debian.
  libcpp-httplib-dev nodejs npm chromium
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  # LLVM's linker: the programs and tests link in a third of GNU ld's time.
  lld
  # tests/data/make_stats_reference.py computes the statistics' reference
  # values with SciPy.
  python3 python3-scipy
  # Foreign benchmarks that the format readers and the A/B of any command
  # are tested on: hyperfine and pytest-benchmark, real tools, real output.
  hyperfine python3-pytest-benchmark
  # Counted metrics: callgrind runs a side under instrumentation, and
  # <valgrind/callgrind.h> marks perfgate's own timed loop.
  valgrind
  # simdjson: the large result files are read at hundreds of MB/s.
  libsimdjson-dev
)

missing=()
for p in "${packages[@]}"; do
  # A Node.js that brings its own npm (NodeSource's nodejs package does, and
  # conflicts with Debian's npm) needs no npm package.
  if [ "$p" = npm ] && command -v npm >/dev/null; then continue; fi
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: every package is present"
  exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "install-deps: missing packages: ${missing[*]}; run this script as root or install sudo" >&2
  exit 2
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
