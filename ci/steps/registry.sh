#!/usr/bin/env bash
# The registry step: local registries on 127.0.0.1 (ci/release/registries.sh), the release
# command publishing dist/'s artifacts to them for real (ci/release/release.sh --publish), then
# installs by name in empty folders (ci/release/by-name-test.sh: pip, npm, cargo, Maven, go get).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

ensure_dist
registries_up
bash ci/release/by-name-test.sh
