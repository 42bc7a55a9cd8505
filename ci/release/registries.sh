#!/usr/bin/env bash
# Local registries on 127.0.0.1, for the release command to publish to and a user's installs to
# read from (ci/release/by-name-test.sh), each a real server of its kind:
#   PyPI   pypiserver (PyPI), any user may upload       port $IDFORGE_PYPI_PORT (24080)
#   npm    verdaccio 6.8.0 (npm; node-fetch held at 2.7.0, as 6.10 does not install here), a user
#          made at start; idforge and idforge-* are served only from it (never proxied: no
#          stranger's package of those names), every other package proxied from the npm registry
#                                                         port $IDFORGE_NPM_PORT (24873)
#   crates cargo-http-registry 0.1.8 (crates.io; a git index in DIR/cargo and the publish API)
#                                                         port $IDFORGE_CARGO_PORT (24082)
#   Maven  a repository folder, DIR/maven (file://…: a Maven repository is files over HTTP), and a
#          throwaway signing key for the release (IDFORGE_GPG_THROWAWAY)
#   Go     a module proxy folder, DIR/goproxy (GOPROXY=file://…), which is what a module host serves
#
#   ci/release/registries.sh start DIR   # prints the `export …` lines ci/release/release.sh and the
#                                        # tests read (IDFORGE_PYPI_URL, IDFORGE_PYPI_INDEX,
#                                        # IDFORGE_NPM_REGISTRY, IDFORGE_NPM_TOKEN,
#                                        # IDFORGE_CARGO_INDEX, CARGO_REGISTRY_TOKEN,
#                                        # IDFORGE_MAVEN_URL, IDFORGE_GPG_THROWAWAY,
#                                        # IDFORGE_GO_PROXY_DIR, TWINE_USERNAME, TWINE_PASSWORD)
#   ci/release/registries.sh stop DIR    # stops what start started (by PID), keeps DIR
# DIR is emptied at start. The tools are cached under $IDFORGE_CACHE (~/.cache/idforge).
set -euo pipefail
cmd="${1:-}" dir="${2:-}"
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: ci/release/registries.sh start|stop DIR" >&2; exit 2; }
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
pypi_port="${IDFORGE_PYPI_PORT:-24080}"
npm_port="${IDFORGE_NPM_PORT:-24873}"
cargo_port="${IDFORGE_CARGO_PORT:-24082}"
VERDACCIO=6.8.0
CARGO_HTTP_REGISTRY=0.1.8

stop() {
  local f pid
  for f in "$dir"/*.pid; do
    [ -f "$f" ] || continue
    pid="$(cat "$f")"
    # Each server leads a process group of its own (setsid): the group goes, children included.
    kill -TERM -- "-$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- "-$pid" 2>/dev/null || true
    rm -f "$f"
  done
}

# Waits up to 60 s for URL to answer; else prints the server's log and fails.
wait_http() {
  local url="$1" log="$2"
  for _ in $(seq 600); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "error: $url did not answer in 60 s; its log:" >&2
  tail -30 "$log" >&2
  return 1
}

if [ "$cmd" = stop ]; then
  stop
  exit 0
fi
[ "$cmd" = start ] || { echo "error: unknown command '$cmd' (start, stop)" >&2; exit 2; }

# ---- the tools ------------------------------------------------------------------------------------
# shellcheck source=ci/release/tools.sh
. ci/release/tools.sh
command -v curl >/dev/null 2>&1 || bash ci/install/install-deps.sh http >&2
verdaccio_home="$CACHE/verdaccio"
if [ "$(cat "$verdaccio_home/.idforge-version" 2>/dev/null)" != "$VERDACCIO" ]; then
  mkdir -p "$verdaccio_home"
  printf '{ "private": true, "dependencies": { "verdaccio": "%s" }, "overrides": { "node-fetch": "2.7.0" } }\n' \
    "$VERDACCIO" >"$verdaccio_home/package.json"
  (cd "$verdaccio_home" && npm install --silent --no-audit --no-fund >&2)
  echo "$VERDACCIO" >"$verdaccio_home/.idforge-version"
fi
tools="$CACHE/tools"
if [ "$("$tools/bin/cargo-http-registry" --version 2>/dev/null | awk '{print $2}')" != "$CARGO_HTTP_REGISTRY" ]; then
  # A build tool (GPL-3.0), run, never vendored; built once per cache, in debug (it serves a few
  # crates: a cold cache compiles it in about half the time of a release build).
  cargo install --quiet --locked --debug --root "$tools" \
    "cargo-http-registry@$CARGO_HTTP_REGISTRY" >&2
fi

# ---- start ----------------------------------------------------------------------------------------
stop
for port in "$pypi_port" "$npm_port" "$cargo_port"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "error: 127.0.0.1:$port is in use (an earlier run's registry? ci/release/registries.sh stop DIR)" >&2
    exit 1
  fi
done
rm -rf "$dir"
mkdir -p "$dir/pypi" "$dir/npm/storage" "$dir/maven" "$dir/goproxy"
dir="$(cd "$dir" && pwd)"

# Each in a session (and process group) of its own, its PID recorded for stop.
launch() {
  local name="$1"
  shift
  setsid "$@" >"$dir/$name.log" 2>&1 </dev/null &
  echo "$!" >"$dir/$name.pid"
}

launch pypi "$RELEASE_VENV/bin/pypi-server" run -i 127.0.0.1 -p "$pypi_port" -a . -P . "$dir/pypi"

cat >"$dir/npm/config.yaml" <<EOF
storage: $dir/npm/storage
auth:
  htpasswd:
    file: $dir/npm/htpasswd
uplinks:
  npmjs:
    url: https://registry.npmjs.org/
packages:
  'idforge':
    access: \$all
    publish: \$authenticated
  'idforge-*':
    access: \$all
    publish: \$authenticated
  '**':
    access: \$all
    publish: \$authenticated
    proxy: npmjs
listen: 127.0.0.1:$npm_port
server:
  keepAliveTimeout: 60
log: { type: stdout, format: pretty, level: warn }
EOF
launch npm node "$verdaccio_home/node_modules/verdaccio/bin/verdaccio" --config "$dir/npm/config.yaml"

launch cargo "$tools/bin/cargo-http-registry" --addr "127.0.0.1:$cargo_port" "$dir/cargo"

wait_http "http://127.0.0.1:$pypi_port/simple/" "$dir/pypi.log"
wait_http "http://127.0.0.1:$npm_port/-/ping" "$dir/npm.log"
for _ in $(seq 600); do [ -f "$dir/cargo/config.json" ] && break; sleep 0.1; done
[ -f "$dir/cargo/config.json" ] || { echo "error: cargo-http-registry made no index; its log:" >&2; tail -30 "$dir/cargo.log" >&2; exit 1; }

# A verdaccio user, and its token.
token="$(curl -fsS -X PUT -H 'content-type: application/json' \
  -d '{"name":"ci","password":"idforge-ci","type":"user"}' \
  "http://127.0.0.1:$npm_port/-/user/org.couchdb.user:ci" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')"

cat <<EOF
export IDFORGE_PYPI_URL=http://127.0.0.1:$pypi_port/
export IDFORGE_PYPI_INDEX=http://127.0.0.1:$pypi_port/simple/
export TWINE_USERNAME=ci TWINE_PASSWORD=ci
export IDFORGE_NPM_REGISTRY=http://127.0.0.1:$npm_port/
export IDFORGE_NPM_TOKEN=$token
export IDFORGE_CARGO_INDEX=file://$dir/cargo
export CARGO_REGISTRY_TOKEN=ci
export IDFORGE_MAVEN_URL=file://$dir/maven IDFORGE_GPG_THROWAWAY=1
export IDFORGE_GO_PROXY_DIR=$dir/goproxy
EOF
