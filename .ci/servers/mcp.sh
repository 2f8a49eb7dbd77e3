#!/usr/bin/env bash
# The MCP reference servers and client the MCP tests run for real:
# @modelcontextprotocol/server-memory, server-filesystem, server-everything
# and the inspector CLI, from the npm registry, into the folder the tests
# look in ($KEEP_MCP_DIR, else ~/.cache/keep/mcp). Idempotent: installs only
# what is missing; gets node and npm from apt if needed.
set -euo pipefail
dir="${KEEP_MCP_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keep/mcp}"
pkgs=(@modelcontextprotocol/server-memory @modelcontextprotocol/server-filesystem
      @modelcontextprotocol/server-everything @modelcontextprotocol/inspector)
missing=()
for p in "${pkgs[@]}"; do
  [ -f "$dir/node_modules/$p/package.json" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "mcp: servers already in $dir"
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "mcp: npm is missing, and installing it needs root and apt-get; the MCP tests will skip (or fail under CI=true)" >&2
    exit 0
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y nodejs npm
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund "${missing[@]}"
echo "mcp: installed ${missing[*]} in $dir"
