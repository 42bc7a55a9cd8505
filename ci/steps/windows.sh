#!/usr/bin/env bash
# The windows step: ci/dist/windows-test.sh, dist/'s Windows artifacts under Wine 8: the C zip's
# README lines and the C tests against idforge.dll and libidforge.a, idforge.exe gen and decode
# against the Linux binary, idforge.exe serve on C:\ and relative data dirs with kill -9 and
# restarts (server/tests/harness/crash_harness.py: 8 Linux clients, 100,000 replies, no id twice), the npm
# package's suite under the official node.exe, and a Go program cross-built for windows/amd64.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

skip_when_deferred windows "neither built nor tested"
ensure_dist
# dist/ of an older checkout, without them: made again, whole.
[ -f "dist/idforge-c-$(dist_version)-x86_64-windows-gnu.zip" ] ||
  CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" bash ci/dist/dist.sh
bash ci/dist/windows-test.sh
