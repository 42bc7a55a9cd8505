#!/usr/bin/env bash
# Real Redis clients against `idforge serve` on the embedded store: redis-cli, redis-py (pytest,
# RESP2 and RESP3) and ioredis (node --test). Starts one server on a free loopback port with a
# throwaway data dir and stops it by PID. Then two striped servers (`--stripe 0/2`, `1/2`) for
# redis-cli and redis-py, unchanged.
#
# Then two servers on TLS (one with mutual TLS), certificates from ci/install/tls-certs.sh: redis-cli
# --tls, redis-py (ssl=True) and ioredis (tls), each also refused where it should be.
#
# Then, with the etcd of ci/services.sh (IDFORGE_TEST_ETCD_URL), three servers sharing it: the
# cluster clients (redis-cli -c, redis-py RedisCluster, ioredis Cluster) each follow a kill -9
# of the leader; the killed server is started again before the next client.
#
#   server/tests/harness/server-clients.sh [path/to/idforge]   (default: $CARGO_TARGET_DIR/debug/idforge)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
target=${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}
bin=${1:-$target/debug/idforge}
venv=${IDFORGE_VENV:-$HOME/.cache/idforge/venv}

work=$(mktemp -d)
pid=""
cluster_pids=()
stripe_pids=()
tls_pids=()
cleanup() {
  for p in "${stripe_pids[@]}" "${tls_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  [ -z "$pid" ] || wait "$pid" 2>/dev/null || true
  for p in "${cluster_pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
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

echo "    TLS and mutual TLS: redis-cli --tls, redis-py, ioredis"
certs="$work/certs"
bash ci/install/tls-certs.sh "$certs"
"$bin" serve --port 0 --port-file "$work/tport" --data-dir "$work/tls" --log warn \
  --tls-cert "$certs/server.pem" --tls-key "$certs/server.key" 2>>"$work/tls.log" &
tls_pids[0]=$!
"$bin" serve --port 0 --port-file "$work/mport" --data-dir "$work/mtls" --log warn \
  --tls-cert "$certs/server.pem" --tls-key "$certs/server.key" \
  --tls-ca-cert "$certs/ca.pem" --tls-auth-clients yes 2>>"$work/tls.log" &
tls_pids[1]=$!
for f in tport mport; do
  for _ in $(seq 150); do [ -s "$work/$f" ] && break; sleep 0.1; done
  [ -s "$work/$f" ] || { cat "$work/tls.log" >&2; exit 1; }
done
export IDFORGE_TLS_PORT IDFORGE_MTLS_PORT IDFORGE_TLS_DIR=$certs
IDFORGE_TLS_PORT=$(cat "$work/tport")
IDFORGE_MTLS_PORT=$(cat "$work/mport")
tcli() { redis-cli -p "$IDFORGE_TLS_PORT" --tls --cacert "$certs/ca.pem" "$@"; }
mcli() { redis-cli -p "$IDFORGE_MTLS_PORT" --tls --cacert "$certs/ca.pem" "$@"; }
[ "$(tcli INCR cli-tls)" = 1 ]
[ "$(seq 100 | sed 's/.*/INCR cli-tls/' | tcli | tail -1)" = 101 ]
[ "$(mcli --cert "$certs/client.pem" --key "$certs/client.key" INCR cli-mtls)" = 1 ]
# Refused: no client certificate, one of another CA, plain TCP, a client that trusts another CA.
refused() {
  if "$@" 2>/dev/null | grep -qx '[0-9][0-9]*'; then echo "not refused: $*" >&2; exit 1; fi
}
refused mcli INCR cli-mtls
refused mcli --cert "$certs/stranger.pem" --key "$certs/stranger.key" INCR cli-mtls
refused redis-cli -p "$IDFORGE_TLS_PORT" INCR cli-tls
refused redis-cli -p "$IDFORGE_TLS_PORT" --tls --cacert "$certs/other-ca.pem" INCR cli-tls
[ "$(mcli --cert "$certs/client.pem" --key "$certs/client.key" INCR cli-mtls)" = 2 ]
"$venv/bin/python" -m pytest -q -p no:cacheprovider server/tests/clients/test_tls_redis_py.py
(cd server/tests/clients && node --test tls.mjs)
for p in "${tls_pids[@]}"; do kill -TERM "$p"; wait "$p"; done
tls_pids=()

echo "    striped servers (--stripe 0/2, 1/2): redis-cli and redis-py, unchanged"
for k in 0 1; do
  "$bin" serve --port 0 --port-file "$work/sport$k" --data-dir "$work/stripe$k" \
    --stripe "$k/2" --stripe-block 1000 --log warn 2>>"$work/stripe$k.log" &
  stripe_pids[$k]=$!
done
for k in 0 1; do
  for _ in $(seq 150); do [ -s "$work/sport$k" ] && break; sleep 0.1; done
  [ -s "$work/sport$k" ] || { cat "$work/stripe$k.log" >&2; exit 1; }
done
sport0=$(cat "$work/sport0")
sport1=$(cat "$work/sport1")
[ "$(redis-cli -p "$sport0" INCR cli-stripe)" = 1 ]
[ "$(redis-cli -p "$sport1" INCR cli-stripe)" = 1001 ]
# 1002-2000 cannot hold 1000 ids: they come from stripe 1's next block, 3001-4000.
[ "$(redis-cli -p "$sport1" INCRBY cli-stripe 1000)" = 4000 ]
redis-cli -p "$sport1" INFO server | grep -q '^stripe:1/2'
IDFORGE_STRIPE_PORTS="$sport0,$sport1" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
  server/tests/clients/test_stripes_redis_py.py
for p in "${stripe_pids[@]}"; do kill -TERM "$p"; wait "$p"; done
stripe_pids=()

if [ -z "${IDFORGE_TEST_ETCD_URL:-}" ]; then
  [ -z "${IDFORGE_REQUIRE_SERVICES:-}" ] || { echo "IDFORGE_TEST_ETCD_URL is not set" >&2; exit 1; }
  echo "    cluster clients skipped: no IDFORGE_TEST_ETCD_URL (ci/services.sh)"
  exit 0
fi
store="$IDFORGE_TEST_ETCD_URL/clients-$$-$RANDOM"
read -r -a cluster_ports <<<"$(python3 -c 'import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')"
start_member() { # start_member INDEX
  "$bin" serve --port "${cluster_ports[$1]}" --store "$store" --log warn 2>>"$work/cluster$1.log" &
  cluster_pids[$1]=$!
  disown "$!" # killed on purpose: no "Killed" notices from bash
}
# Starts the members that are not running, then waits until one of them leads.
ensure_cluster() {
  for i in 0 1 2; do
    if [ -z "${cluster_pids[$i]:-}" ] || ! kill -0 "${cluster_pids[$i]}" 2>/dev/null; then
      start_member "$i"
    fi
  done
  # Every member answers (a standby that is still starting refuses connections), one leads, and
  # every standby names it: a standby that does not know the leader yet answers CLUSTERDOWN,
  # which redis-cli -c does not retry.
  for _ in $(seq 150); do
    local infos=() leads=() port
    for port in "${cluster_ports[@]}"; do
      infos+=("$(redis-cli -p "$port" INFO replication 2>/dev/null | tr -d '\r' || true)")
      grep -q '^role:master' <<<"${infos[-1]}" && leads+=("$port")
    done
    if [ "${#leads[@]}" = 1 ]; then
      local known=0
      for info in "${infos[@]}"; do
        grep -q -e '^role:master' -e "^leader:.*:${leads[0]}\$" <<<"$info" && known=$((known + 1))
      done
      [ "$known" = 3 ] && return 0
    fi
    sleep 0.1
  done
  echo "no leader that every member of ${cluster_ports[*]} knows" >&2
  cat "$work"/cluster*.log >&2
  return 1
}
leader_index() {
  for i in 0 1 2; do
    redis-cli -p "${cluster_ports[$i]}" INFO replication 2>/dev/null | grep -q role:master && {
      echo "$i"
      return
    }
  done
}
cluster_env() {
  export IDFORGE_CLUSTER_PORTS IDFORGE_CLUSTER_PIDS
  IDFORGE_CLUSTER_PORTS=$(IFS=,; echo "${cluster_ports[*]}")
  IDFORGE_CLUSTER_PIDS=$(IFS=,; echo "${cluster_pids[*]}")
}

echo "    redis-cli -c (cluster mode) through a failover"
ensure_cluster
lead=$(leader_index)
standby=${cluster_ports[$(((lead + 1) % 3))]}
first=$(redis-cli -c -p "$standby" INCR cli-cluster 2>&1) || true
[ "$first" = 1 ] || { echo "redis-cli -c before the failover: '$first'" >&2; cat "$work"/cluster*.log >&2; exit 1; }
kill -9 "${cluster_pids[$lead]}"
next=""
for _ in $(seq 300); do
  next=$(redis-cli -c -p "$standby" INCR cli-cluster 2>/dev/null || true)
  [[ "$next" =~ ^[0-9]+$ ]] && break
  sleep 0.05
done
[[ "$next" =~ ^[0-9]+$ ]] && [ "$next" -gt "$first" ] || {
  echo "redis-cli -c after the failover: '$next'" >&2
  exit 1
}

echo "    redis-py RedisCluster through a failover"
ensure_cluster
cluster_env
"$venv/bin/python" -m pytest -q -p no:cacheprovider server/tests/clients/cluster_redis_py.py

echo "    worker-id leases: 50 processes acquire, crash or release, re-acquire; a leader kill"
ensure_cluster
cluster_env
"$venv/bin/python" -m pytest -q -p no:cacheprovider server/tests/clients/worker_leases.py

echo "    ioredis Cluster through a failover"
ensure_cluster
cluster_env
(cd server/tests/clients && node --test cluster.mjs)
echo "    cluster clients ok"
