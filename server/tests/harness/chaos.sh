#!/usr/bin/env bash
# The partition harness (Jepsen-style, bounded, in network namespaces of this machine only):
# 3 etcd members and 3 `idforge serve` on one etcd store, each in a network namespace of its
# own, joined by veth pairs to a bridge in a switch namespace; clients in another namespace.
# server/tests/harness/chaos.py then runs every nemesis RUNS times (default 5) under recording clients and checks
# the history: 0 duplicate ids, every client's ids increasing per tag, no id from a leader past
# its lease; it prints the outage of each nemesis.
#
#   server/tests/harness/chaos.sh [path/to/idforge] [--json FILE]     (RUNS=5, HOLD=3 seconds per nemesis;
#                                                    CHAOS_WORK=DIR keeps the logs there)
#
# Needs root (ip netns, iptables, tc); installs etcd, iptables and faketime (ci/install/install-deps.sh
# chaos). Addresses 10.77.0.0/24 exist only inside the namespaces; the namespaces (idf-*) and
# every process started in them are removed at exit, also after a failure.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
target=${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}
bin=$(realpath "${1:-$target/debug/idforge}")
shift || true
if [ "$(id -u)" -ne 0 ]; then
  echo "server/tests/harness/chaos.sh needs root (network namespaces, iptables)" >&2
  exit 1
fi
bash ci/install/install-deps.sh etcd chaos

hosts=(e1 e2 e3 s1 s2 s3 c)
declare -A addr=([e1]=10.77.0.11 [e2]=10.77.0.12 [e3]=10.77.0.13
  [s1]=10.77.0.21 [s2]=10.77.0.22 [s3]=10.77.0.23 [c]=10.77.0.31)

remove_namespaces() {
  # Whatever still runs inside a namespace goes with it (by PID, from `ip netns pids`).
  for h in "${hosts[@]}"; do
    for pid in $(ip netns pids "idf-$h" 2>/dev/null); do kill -9 "$pid" 2>/dev/null || true; done
  done
  for h in "${hosts[@]}" sw; do ip netns del "idf-$h" 2>/dev/null || true; done
}
remove_namespaces # left by an earlier run that was killed
# CHAOS_WORK keeps the logs and data in that folder (else a temporary one, removed at exit).
if [ -n "${CHAOS_WORK:-}" ]; then
  work=$CHAOS_WORK
  rm -rf "$work" && mkdir -p "$work"
  trap remove_namespaces EXIT
else
  work=$(mktemp -d)
  trap 'remove_namespaces; rm -rf "$work"' EXIT
fi

ip netns add idf-sw
ip netns exec idf-sw ip link add br0 type bridge
ip netns exec idf-sw ip link set br0 up
ip netns exec idf-sw ip link set lo up
for h in "${hosts[@]}"; do
  ns=idf-$h
  ip netns add "$ns"
  ip netns exec idf-sw ip link add "v-$h" type veth peer name eth0 netns "$ns"
  ip netns exec idf-sw ip link set "v-$h" master br0 up
  ip netns exec "$ns" ip link set lo up
  ip netns exec "$ns" ip addr add "${addr[$h]}/24" dev eth0
  ip netns exec "$ns" ip link set eth0 up
  # The nemeses put their rules in CHAOSIN and CHAOSOUT; healing flushes them.
  ip netns exec "$ns" iptables -N CHAOSIN
  ip netns exec "$ns" iptables -N CHAOSOUT
  ip netns exec "$ns" iptables -I INPUT -j CHAOSIN
  ip netns exec "$ns" iptables -I OUTPUT -j CHAOSOUT
done
# Every host reaches every other before the harness starts.
for h in "${hosts[@]}"; do
  ip netns exec idf-c ping -c 1 -W 2 "${addr[$h]}" >/dev/null
done

# Protected mode across hosts first: a server bound to every address with no password serves
# only its own host.
mkdir -p "$work/protected"
ip netns exec idf-c python3 server/tests/harness/protected_mode.py "$bin" "$work/protected" || {
  tail -n 20 "$work"/protected/*.log >&2 || true
  exit 1
}
ip netns exec idf-c python3 server/tests/harness/chaos.py "$bin" "$work" --runs "${RUNS:-5}" \
  --hold "${HOLD:-3}" "$@" || {
  tail -n 20 "$work"/*.log >&2 || true
  exit 1
}
