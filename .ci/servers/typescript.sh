#!/usr/bin/env bash
# TypeScript's tsc, which the reference tests (engine/reference) run over
# keep.d.ts and the example workflows. Installed from the npm registry into
# the cache the tests look in ($KEEP_TSC_DIR, else ~/.cache/keep/typescript).
# Idempotent: installs only when missing; gets node and npm from apt if needed.
set -euo pipefail
dir="${KEEP_TSC_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keep/typescript}"
if [ -x "$dir/node_modules/.bin/tsc" ]; then
  echo "typescript: $("$dir/node_modules/.bin/tsc" --version) already in $dir"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "typescript: npm is missing, and installing it needs root and apt-get; the tsc tests will skip (or fail under CI=true)" >&2
    exit 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y nodejs npm
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund typescript@5
echo "typescript: $("$dir/node_modules/.bin/tsc" --version) installed in $dir"
