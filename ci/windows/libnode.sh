#!/usr/bin/env bash
# Makes an import library of node.exe's N-API exports for the windows-gnu Node addon, and prints
# the folder to give napi-build as LIBNODE_PATH. Build scaffolding, never shipped: napi-build 2
# links `-lnode` for windows-gnu and needs a libnode.dll beside the import library (an empty file
# does); the addon then resolves its napi_* calls in the node.exe that loads it.
#
#   ci/windows/libnode.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
node_exe="$(bash ci/windows/node-exe.sh)"
dir="$(dirname "$node_exe")/libnode"
if [ ! -f "$dir/libnode.dll.a" ]; then
  mkdir -p "$dir"
  {
    echo "LIBRARY node.exe"
    echo "EXPORTS"
    # objdump -p's export table: "[ord] name" lines; the N-API and Node-API names only.
    x86_64-w64-mingw32-objdump -p "$node_exe" | awk '$NF ~ /^(napi|node_api)_/ { print $NF }' | sort -u
  } >"$dir/node.def"
  n="$(grep -c '^n' "$dir/node.def")"
  [ "$n" -ge 100 ] || { echo "error: only $n N-API exports found in $node_exe" >&2; exit 1; }
  x86_64-w64-mingw32-dlltool -d "$dir/node.def" -D node.exe -l "$dir/libnode.dll.a.new"
  : >"$dir/libnode.dll"
  mv "$dir/libnode.dll.a.new" "$dir/libnode.dll.a"
fi
echo "$dir"
