#!/usr/bin/env bash
# The test step: cargo test --workspace --locked (the store's tests and the segment sources
# against the real servers of ci/services.sh), then ci/steps/rust-frameworks.sh (idforge-core's
# serde, uuid and sqlx features; examples/rust-sqlx in SQLite and PostgreSQL).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

# Paused beside it: stripes' client, meant to meet a server restarted on another stripe, served
# from the other server for 30 s with a build beside it (twice; never without one).
without_prebuild cargo test --workspace --locked
bash ci/steps/rust-frameworks.sh
