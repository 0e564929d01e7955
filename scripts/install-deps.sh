#!/usr/bin/env bash
# Installs the Debian 12 packages perfgate builds and tests with, skipping
# those already present. Runs apt-get as root, or through sudo.
set -euo pipefail

packages=(
  g++ cmake make pkg-config git ca-certificates
  libgtest-dev libgmock-dev libbenchmark-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libpqxx-dev libssl-dev libopenblas-dev libyaml-cpp-dev libcli11-dev nlohmann-json3-dev
  libboost-math-dev libgloo-dev
  postgresql slurm-wlm munge
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  python3
)

missing=()
for p in "${packages[@]}"; do
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
