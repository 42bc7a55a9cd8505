#!/usr/bin/env bash
# Installs the Kotlin compiler (the npm package kotlin-compiler, pinned) into
# $IDFORGE_CACHE/kotlin once, and prints its home (bin/kotlinc, lib/kotlin-stdlib.jar).
#
#   ci/install/install-kotlin.sh      (needs node and npm; ci/steps/jvm.sh and ci/docs.sh call it)
set -euo pipefail
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
KOTLIN_VERSION=2.4.20
KOTLIN_HOME="$CACHE/kotlin/node_modules/kotlin-compiler"
if [ "$(cat "$KOTLIN_HOME/.idforge-version" 2>/dev/null)" != "$KOTLIN_VERSION" ]; then
  echo "    installing kotlin-compiler@$KOTLIN_VERSION (npm)" >&2
  mkdir -p "$CACHE/kotlin"
  npm install --silent --no-save --no-audit --no-fund --prefix "$CACHE/kotlin" \
    "kotlin-compiler@$KOTLIN_VERSION" >/dev/null
  echo "$KOTLIN_VERSION" >"$KOTLIN_HOME/.idforge-version"
fi
echo "$KOTLIN_HOME"
