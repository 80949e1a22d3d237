#!/usr/bin/env bash
# Runs before `npm test` (the `pretest` script): the browser tests under test/e2e drive
# Debian's Chromium through playwright-core, which downloads no browser. Finds it at
# $CHROMIUM_PATH (default /usr/bin/chromium, the path test/e2e/browser.ts launches); when it
# is missing and this runs as root with apt-get, installs Debian's `chromium`; otherwise stops
# at once with one line saying what to install, so no browser test fails or is skipped later.
set -euo pipefail

chromium="${CHROMIUM_PATH:-/usr/bin/chromium}"
[ -x "$chromium" ] && exit 0

if [ -z "${CHROMIUM_PATH:-}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "pretest: installing Debian's chromium for the browser tests (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq chromium >&2 || true
  [ -x "$chromium" ] && exit 0
fi

echo "pretest: no Chromium at $chromium: install Debian's package (sudo apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary." >&2
exit 1
