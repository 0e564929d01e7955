#!/usr/bin/env bash
# Runs perfgate-agent from an image pinned by digest, so that every run it
# makes records that digest as its image_digest:
#
#   deploy/docker/run-agent.sh [ENGINE-RUN-FLAG...] REPO@sha256:DIGEST [AGENT-ARG...]
#
# e.g. deploy/docker/run-agent.sh --device=nvidia.com/gpu=all \
#        registry.example.com/perfgate-agent@sha256:... run --suite kernels
#
# Flags before the image go to `ENGINE run` (GPUs, mounts, registry TLS);
# write them as --flag=value. The engine is podman, or
# $PERFGATE_CONTAINER_ENGINE (docker takes the same flags, with --gpus=all
# for the GPUs). The container shares the host's network; it gets the
# PERFGATE_*, SLURM_* and CUDA_VISIBLE_DEVICES variables of this environment, and
# PERFGATE_IMAGE_DIGEST from the reference itself: the engine checks the
# image it runs against that digest, so the digest recorded is the one run.
# Nothing here passes through a shell: every value stays one argument.
set -euo pipefail
engine=${PERFGATE_CONTAINER_ENGINE:-podman}

flags=()
while [[ $# -gt 0 && $1 == -* ]]; do
  flags+=("$1")
  shift
done
if [[ $# -eq 0 ]]; then
  echo "usage: $0 [ENGINE-RUN-FLAG...] REPO@sha256:DIGEST [AGENT-ARG...]" >&2
  exit 2
fi
image=$1
shift
if ! [[ $image =~ @(sha256:[0-9a-f]{64})$ ]]; then
  echo "$0: image '$image' is not pinned: name it by digest, REPO@sha256:<64 hex digits>" >&2
  exit 2
fi
digest=${BASH_REMATCH[1]}

env_flags=()
while read -r name; do
  [[ $name == PERFGATE_IMAGE_DIGEST ]] || env_flags+=(--env "$name")
done < <(compgen -e | grep -E '^(PERFGATE_|SLURM_|CUDA_VISIBLE_DEVICES$)' || true)

exec "$engine" run --rm --network=host "${env_flags[@]}" --env "PERFGATE_IMAGE_DIGEST=$digest" \
  "${flags[@]}" "$image" "$@"
