#!/usr/bin/env bash
# The ops step: ci/ops/ops-test.sh, the server as operators run it (the alert rules, the OCI
# image from dist/'s static servers, containers, Prometheus and the dashboard, the Kubernetes
# overlays). Without the static servers (the cross lane deferred) only the rules and manifests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

ensure_dist
if ! ls dist/idforge-"$(dist_version)"-*-linux-musl.tar.gz >/dev/null 2>&1; then
  note "deferred with the cross lane: no static server, so no image, container or Prometheus" \
    "check; the rules and manifests checked"
  cargo build -p idforge-server --bin idforge --locked
  IDFORGE_BIN="$CARGO_TARGET_DIR/debug/idforge" bash ci/ops/ops-test.sh --no-image
  exit 0
fi
bash ci/ops/ops-test.sh
