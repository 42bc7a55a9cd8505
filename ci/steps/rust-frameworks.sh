#!/usr/bin/env bash
# idforge-core's optional features (serde, uuid, sqlx; the runtime `idforge` passes them on),
# which the workspace builds leave off:
#   - clippy -D warnings and the unit and doc tests of idforge-core and idforge with all three on;
#   - examples/rust-sqlx (a crate outside the workspace, so that turning the features on there
#     rebuilds no other crate): fmt, clippy, and its test of 10,000 rows from 8 tokio tasks in
#     SQLite and in the services' PostgreSQL (IDFORGE_TEST_POSTGRES_URL, required here).
# Both build in a target directory of their own under CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}/rust-sqlx"
features=serde,uuid,sqlx

echo "--- idforge-core and idforge --features $features: clippy, unit and doc tests"
cargo clippy -p idforge-core -p idforge --no-default-features --features "$features" --all-targets --locked -- -D warnings
cargo test -q -p idforge-core --features "$features" --locked --lib
cargo test -q -p idforge-core -p idforge --no-default-features --features "$features" --locked --doc

echo "--- examples/rust-sqlx: fmt, clippy, the sqlx test in SQLite and PostgreSQL"
manifest=examples/rust-sqlx/Cargo.toml
cargo fmt --manifest-path "$manifest" -- --check
cargo clippy --manifest-path "$manifest" --all-targets --locked -- -D warnings
IDFORGE_REQUIRE_FRAMEWORKS=1 cargo test --manifest-path "$manifest" --locked
