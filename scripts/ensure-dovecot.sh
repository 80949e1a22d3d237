#!/usr/bin/env bash
# The bounce-mailbox tests run a real IMAP server: Debian's dovecot (started by the tests
# themselves, on 127.0.0.1, with a configuration of their own). Installs it when missing.
set -euo pipefail
if [ -x /usr/sbin/dovecot ]; then exit 0; fi
if [ "$(id -u)" != "0" ]; then
  echo "dovecot-imapd is missing and this is not root: run 'apt-get install dovecot-imapd' first" >&2
  exit 1
fi
echo "Installing dovecot-imapd for the bounce-mailbox tests" >&2
apt-get update -qq
# policy-rc.d (containers) keeps the package from starting a system-wide server; the tests start their own.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dovecot-imapd >/dev/null
