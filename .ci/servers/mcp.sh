#!/usr/bin/env bash
# The MCP reference servers and client the MCP tests run for real:
# @modelcontextprotocol/server-memory, server-filesystem, server-everything
# and the inspector CLI, from the npm registry, into the folder the tests
# look in ($KEEP_MCP_DIR, else ~/.cache/keep/mcp). Versions are pinned (the
# README's examples name the same ones). Idempotent: installs only what is
# missing or at another version; gets node and npm from apt if needed.
set -euo pipefail
dir="${KEEP_MCP_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/keep/mcp}"
pkgs=(@modelcontextprotocol/server-memory@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31
      @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/inspector@0.15.0)
missing=()
for p in "${pkgs[@]}"; do
  name="${p%@*}" version="${p##*@}"
  grep -q "\"version\": \"$version\"" "$dir/node_modules/$name/package.json" 2>/dev/null || missing+=("$p")
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
