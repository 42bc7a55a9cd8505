#!/usr/bin/env bash
# The macos step: ci/dist/macos-check.sh, clippy (check and lints, warnings as errors) of every
# crate for aarch64-apple-darwin and x86_64-apple-darwin (Debian's Rust and clippy, std from
# source, zig for the C of the build scripts), into the dist builds' cross folder. Nothing links or
# runs: no macOS SDK or Mac here.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

skip_when_deferred macos "not checked"
CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" bash ci/dist/macos-check.sh
