#!/usr/bin/env bash
# The Debian 12 base the container tests build perfgate's images on, where
# the bases of deploy/docker/bases.env cannot be pulled: a minimal root file
# system made by debootstrap from Debian's mirror, imported into podman as
# localhost/perfgate-ci/debian:bookworm.
#
#   scripts/container-base.sh        prints the image name once it exists
#
# The root file system is kept as a tarball in $PERFGATE_CACHE_DIR (default
# /var/cache/perfgate-ci), so that only the first run on a machine pays for
# debootstrap (about a minute); podman's own store keeps the image itself.
set -euo pipefail
image=localhost/perfgate-ci/debian:bookworm
cache=${PERFGATE_CACHE_DIR:-/var/cache/perfgate-ci}
mirror=${PERFGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
tarball=$cache/debian-bookworm-minbase.tar

if podman image exists "$image"; then
  echo "$image"
  exit 0
fi
mkdir -p "$cache"
if [[ ! -s $tarball ]]; then
  root=$(mktemp -d "${TMPDIR:-/tmp}/perfgate-rootfs-XXXXXX")
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase bookworm "$root" "$mirror" >&2
  # The downloaded packages are installed; their files would only weigh.
  rm -f "$root"/var/cache/apt/archives/*.deb
  # Written aside and renamed: a cut-off run leaves no half tarball behind.
  tar -C "$root" -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
fi
podman import "$tarball" "$image" >&2
echo "$image"
