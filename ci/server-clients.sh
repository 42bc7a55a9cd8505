#!/usr/bin/env bash
# Real Redis clients against `idforge serve` on the embedded store: redis-cli, redis-py (pytest,
# RESP2 and RESP3) and ioredis (node --test). Starts one server on a free loopback port with a
# throwaway data dir and stops it by PID.
#
#   ci/server-clients.sh [path/to/idforge]   (default: $CARGO_TARGET_DIR/debug/idforge)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
target=${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}
bin=${1:-$target/debug/idforge}
venv=${IDFORGE_VENV:-$HOME/.cache/idforge/venv}

work=$(mktemp -d)
pid=""
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  [ -z "$pid" ] || wait "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" serve --port 0 --port-file "$work/port" --data-dir "$work/data" 2>"$work/log" &
pid=$!
for _ in $(seq 150); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { cat "$work/log" >&2; exit 1; }
port=$(cat "$work/port")
export IDFORGE_PORT=$port

echo "    redis-cli"
cli() { redis-cli -p "$port" "$@"; }
[ "$(cli PING)" = PONG ]
[ "$(cli INCR orders)" = 1 ]
[ "$(cli INCR orders)" = 2 ]
[ "$(cli INCRBY orders 1000)" = 1002 ]
[ "$(cli GET orders)" = 1002 ]
cli INCRBY orders -1 | grep -q 'positive'
# Many commands in one stream (redis-cli reads them from stdin).
seq 200 | sed 's/.*/INCR piped/' | cli >"$work/piped"
[ "$(sort -n "$work/piped" | uniq | wc -l)" = 200 ]
[ "$(tail -1 "$work/piped")" = 200 ]
cli -3 HELLO 3 | grep -q idforge
cli INFO server | grep -q '^idforge_version:'

echo "    redis-py"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet "pytest>=7" "redis==8.1.0"
"$venv/bin/python" -m pytest -q -p no:cacheprovider server/tests/clients/test_redis_py.py

echo "    ioredis"
(cd server/tests/clients && npm ci --no-audit --no-fund --silent && npm test --silent)

kill -TERM "$pid"
wait "$pid"
pid=""
echo "    clients ok; clean shutdown"
