#!/usr/bin/env bash
# Installs libidforge into a temporary prefix and builds examples/c with pkg-config, linked
# both ways (shared, and static with --static); runs each. Part of ci/test.sh (step ctest).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
command -v pkg-config >/dev/null || { echo "error: pkg-config not found (ci/install-deps.sh)" >&2; exit 1; }
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
bash ci/install-c.sh "$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror -pedantic examples/c/order_ids.c -o "$prefix/order_ids" \
  $(pkg-config --cflags --libs idforge)
LD_LIBRARY_PATH="$prefix/lib" "$prefix/order_ids"
# shellcheck disable=SC2046
cc -std=c99 -Wall -Wextra -Werror -pedantic examples/c/order_ids.c -o "$prefix/order_ids_static" \
  $(pkg-config --cflags idforge) "$prefix/lib/libidforge.a" $(pkg-config --static --libs-only-l idforge | sed 's/-lidforge//')
"$prefix/order_ids_static" | tail -1
echo "examples/c: built with pkg-config and ran (shared and static)"
