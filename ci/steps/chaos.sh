#!/usr/bin/env bash
# The chaos step: server/tests/harness/chaos.sh, the partition harness (3 etcd members, 3 servers, clients,
# each in a network namespace of its own; 6 nemeses x 5 runs: the leader cut from etcd, from the
# clients, an etcd member cut off, a minority split, a slow and lossy leader, a leader's wall clock
# 3 h ahead), checking 0 duplicates, per-client order and no id past a lease. Needs root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

cargo build -p idforge-server --bin idforge --locked
bash server/tests/harness/chaos.sh "$CARGO_TARGET_DIR/debug/idforge"
