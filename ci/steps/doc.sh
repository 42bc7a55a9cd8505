#!/usr/bin/env bash
# The doc step: rustdoc of every crate with warnings as errors (broken links, missing docs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked
