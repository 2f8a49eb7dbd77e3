#!/usr/bin/env bash
# Installs Dovecot (IMAP) and Postfix (SMTP) from Debian's packages for the
# mail connector's tests. The tests write their own configs into temp dirs
# and start the daemons themselves, so the packages' own services are left
# unconfigured ('No configuration') and stopped. Idempotent: skips when both
# binaries are already there.
set -euo pipefail
if command -v dovecot >/dev/null 2>&1 && { command -v postfix >/dev/null 2>&1 || [ -x /usr/sbin/postfix ]; }; then
  echo "mail.sh: dovecot and postfix already installed"
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "mail.sh: needs root and apt-get to install dovecot-imapd and postfix; the mail server tests will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
echo "postfix postfix/mailname string localhost" | debconf-set-selections
apt-get update
apt-get install -y --no-install-recommends dovecot-imapd postfix
# The packages may start system-wide daemons; the tests start their own.
if command -v service >/dev/null 2>&1; then
  service dovecot stop >/dev/null 2>&1 || true
  service postfix stop >/dev/null 2>&1 || true
fi
