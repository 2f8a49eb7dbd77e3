#!/usr/bin/env bash
# fuse3, for the power-cut tests: they run keep's data directory on lazyfs
# (storage/lazyfs), a FUSE file system that drops unsynced writes at a
# simulated power cut. As root the tests mount directly through /dev/fuse;
# fusermount3 lets them mount otherwise. Idempotent: installs only when
# missing.
set -euo pipefail
if command -v fusermount3 >/dev/null 2>&1; then
  echo "fuse3: $(fusermount3 --version 2>&1) already installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "fuse3: not installed, and this needs root and apt-get; the power-cut tests mount directly as root, else skip (or fail under CI=true)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y fuse3
echo "fuse3: $(fusermount3 --version 2>&1) installed"
