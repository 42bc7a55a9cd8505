#!/usr/bin/env bash
# Installs libidforge into a temporary prefix (ci/install/install-c.sh) and builds, as the README's "Use
# from C and C++" says, its program and examples/c with pkg-config: shared (idforge.pc; run with no
# LD_LIBRARY_PATH: its rpath finds the library) and static (idforge-static.pc; ldd names no
# libidforge). Runs each. Part of ci/test.sh (step ctest).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"
command -v pkg-config >/dev/null || { echo "error: pkg-config not found (ci/install/install-deps.sh)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The README's program and its lines as written; only the prefix and the script's path differ.
python3 ci/docs/doc_block.py README.md '## Use from C and C++' c >"$work/app.c"
python3 ci/docs/doc_block.py docs/c.md 'From source' sh |
  sed -e "s#/opt/idforge#$work/idforge#g" -e "s#^ci/#$repo/ci/#" >"$work/lines.sh"
(cd "$work" && env -u LD_LIBRARY_PATH sh -e lines.sh >/dev/null)
if ldd "$work/app-static" | grep libidforge; then
  echo "error: the idforge-static build loads a libidforge" >&2
  exit 1
fi

export PKG_CONFIG_PATH="$work/idforge/lib/pkgconfig"
for example in order_ids time_ordered; do
  # shellcheck disable=SC2046
  cc -std=c99 -Wall -Wextra -Werror -pedantic "examples/c/$example.c" -o "$work/$example" \
    $(pkg-config --cflags --libs idforge)
  env -u LD_LIBRARY_PATH "$work/$example" >/dev/null
  # shellcheck disable=SC2046
  cc -std=c99 -Wall -Wextra -Werror -pedantic "examples/c/$example.c" -o "$work/${example}_static" \
    $(pkg-config --cflags --libs idforge-static)
  if ldd "$work/${example}_static" | grep libidforge; then
    echo "error: ${example}_static loads a libidforge" >&2
    exit 1
  fi
  "$work/${example}_static" | tail -1
done
echo "examples/c: the README's program, order_ids.c and time_ordered.c built with pkg-config and run (shared, no LD_LIBRARY_PATH; static, no libidforge)"
