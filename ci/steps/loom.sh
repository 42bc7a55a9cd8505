#!/usr/bin/env bash
# The loom step: the loom models of idforge-core (core/tests/loom.rs), at most
# LOOM_MAX_PREEMPTIONS (2) preemptions.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

# Own target dir: the --cfg loom flag would otherwise rebuild everything in the shared one.
# Fat LTO (the release profile) only slows the build here; the models need the optimizer, not LTO.
RUSTFLAGS="--cfg loom" \
  LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
  CARGO_PROFILE_RELEASE_LTO=false \
  CARGO_TARGET_DIR="$CARGO_TARGET_DIR/loom" \
  cargo test -p idforge-core --release --locked --test loom
