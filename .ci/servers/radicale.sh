#!/usr/bin/env bash
# Radicale, the CalDAV server the calendar connector's tests start on
# loopback (connectors/calendar). Idempotent: installs only when missing.
set -euo pipefail
if command -v radicale >/dev/null 2>&1; then
  echo "radicale: $(radicale --version) already installed"
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "radicale: not installed, and this needs root and apt-get; the calendar tests will skip (or fail under CI=true)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y radicale
echo "radicale: $(radicale --version) installed"
