#!/usr/bin/env bash
# The nostd step: ci/nostd-check, idforge-core linked into a no_std, no-alloc staticlib.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

CARGO_TARGET_DIR="$CARGO_TARGET_DIR/nostd" \
  cargo build --manifest-path ci/nostd-check/Cargo.toml --release
