#!/bin/sh
# The image's entry: a role (both, web, worker, inbound) starts the service in that role;
# anything else runs as given (`node dist/src/cli.js backup --out /data/backup.json`).
set -e
case "${1:-both}" in
  both | web | worker | inbound) exec node /app/dist/src/server.js --role="${1:-both}" ;;
  *) exec "$@" ;;
esac
