#!/usr/bin/env bash
# The fmt step: cargo fmt --all -- --check, and rustfmt --check on ci/nostd-check (a workspace of
# its own, so `cargo fmt --all` does not see it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

ensure_rust_component rustfmt
cargo fmt --all -- --check
rustfmt --edition 2024 --check ci/nostd-check/src/lib.rs
