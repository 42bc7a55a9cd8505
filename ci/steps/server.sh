#!/usr/bin/env bash
# The server step: the segment server's process tests (single node, and HA on etcd), then the
# harnesses of server/tests/harness/: server-clients.sh (redis-cli, redis-py, ioredis, and their
# cluster clients following a failover), crash-harness.sh (kill -9 and SIGTERM, 50 cycles each),
# failover-harness.sh (3 etcd members, 3 servers, 20 leader kills), hostile.py (hostile clients)
# and http-harness.sh (the HTTP API: Leaf and tinyid formats, the status page in headless
# Chromium, HTTP ids across kill -9 and a failover, hostile HTTP clients).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

ensure_node
cargo build -p idforge-server --locked
cargo test -p idforge-server --locked --test serve
cargo test -p idforge-server --locked --test ha
cargo test -p idforge-server --locked --test limits
# Leases handed to processes whose clocks libfaketime moves (installed with the services).
cargo test -p idforge-server --locked --test lease_clocks
bin="$CARGO_TARGET_DIR/debug/idforge"
bash server/tests/harness/server-clients.sh "$bin"
bash server/tests/harness/crash-harness.sh "$bin"
bash server/tests/harness/failover-harness.sh "$bin"
without_prebuild python3 server/tests/harness/hostile.py "$bin"
# Paused beside it too: its hostile HTTP clients have latency bounds (100,000 tags loaded,
# 10,000 connections).
without_prebuild bash server/tests/harness/http-harness.sh "$bin"
