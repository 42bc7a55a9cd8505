#!/usr/bin/env bash
# The release of this checkout's dist/ on local registries: ci/release/registries.sh starts them in
# DIR, ci/release/release.sh --publish publishes to them (its packages made in DIR/stage). Prints
# the registries' `export …` lines (as registries.sh start does) once everything is published,
# and IDFORGE_MAVEN_SIGNING_KEY (the public key the Maven files were signed with).
# Without the aarch64 artifacts (CI's cross lane deferred), the host's are published alone.
#
#   ci/release/local-release.sh DIR        (stop with: ci/release/registries.sh stop DIR/reg)
set -euo pipefail
dir="$1"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p "$dir"
# A release that fails leaves no registry running.
published=0
trap '[ "$published" = 1 ] || bash ci/release/registries.sh stop "$dir/reg"' EXIT
bash ci/release/registries.sh start "$dir/reg" >"$dir/env"
# shellcheck source=/dev/null
. "$dir/env"
partial=0
compgen -G "${IDFORGE_DIST_DIR:-dist}/idforge-c-*-aarch64-linux-gnu.tar.gz" >/dev/null || partial=1
compgen -G "${IDFORGE_DIST_DIR:-dist}/idforge-c-*-x86_64-windows-gnu.zip" >/dev/null || partial=1
IDFORGE_RELEASE_PARTIAL="$partial" bash ci/release/release.sh --publish --dist "${IDFORGE_DIST_DIR:-dist}" \
  --stage "$dir/stage" >&2
published=1
cat "$dir/env"
# The release's public key, for the checks of its signatures.
echo "export IDFORGE_MAVEN_SIGNING_KEY=$(cd "$dir" && pwd)/stage/maven/maven-signing-key.asc"
