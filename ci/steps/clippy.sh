#!/usr/bin/env bash
# The clippy step: cargo clippy --workspace --all-targets --locked -- -D warnings, and the runtime
# without its default `sql` feature.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

ensure_rust_component clippy
cargo clippy --workspace --all-targets --locked -- -D warnings
cargo clippy -p idforge --no-default-features --all-targets --locked -- -D warnings
