#!/usr/bin/env bash
# The HA failover harness (bounded: ROUNDS leader kills, loopback only): server/tests/harness/failover_harness.py
# runs a 3-member etcd cluster and 3 `idforge serve` on it, kills the leader ROUNDS times (and
# some etcd members) under 8 recording clients, then pauses one past its lease. Exit status
# non-zero on any duplicate id, out-of-order reply, id from a resumed paused leader, or a round
# with no takeover within 10 s. Prints the kill-to-next-id times (p50, max).
#
#   server/tests/harness/failover-harness.sh [path/to/idforge] [--json FILE]   (ROUNDS=20 by default)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
target=${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}
bin=${1:-$target/debug/idforge}
shift || true
bash ci/install/install-deps.sh etcd

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 server/tests/harness/failover_harness.py "$bin" "$work" --rounds "${ROUNDS:-20}" "$@" || {
  tail -n 20 "$work"/idforge*.log >&2
  exit 1
}
