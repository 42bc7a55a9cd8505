#!/usr/bin/env bash
# The docs step: ci/docs.sh, every fenced code block of the documents run as written on dist/'s
# artifacts and the local registries' packages (built and published first when missing).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

ensure_dist
registries_up
bash ci/docs.sh
