#!/usr/bin/env bash
# Builds libidforge (release) and installs it for C and C++ users:
#   PREFIX/include/idforge.h
#   PREFIX/lib/libidforge.so.MAJOR.MINOR.PATCH, libidforge.so.MAJOR (soname), libidforge.so
#   PREFIX/lib/libidforge.a
#   PREFIX/lib/pkgconfig/idforge.pc          shared: -lidforge, and an rpath to PREFIX/lib
#   PREFIX/lib/pkgconfig/idforge-static.pc   static: PREFIX/lib/libidforge.a and the system libraries
#
#   ci/install/install-c.sh PREFIX       then: PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config --cflags --libs idforge
#                                (or idforge-static)
#
# IDFORGE_C_PROFILE=debug installs the debug build instead (ci/test.sh: its C and Go tests share
# the debug build of the other steps rather than compile every dependency again for release).
set -euo pipefail

[ "$#" -eq 1 ] || { echo "usage: ci/install/install-c.sh PREFIX" >&2; exit 2; }
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"

version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
major="${version%%.*}"
[ -n "$version" ] || { echo "error: no IDFORGE_VERSION_STRING in include/idforge.h" >&2; exit 1; }

# bindings/c/build.rs sets the soname, libidforge.so.MAJOR.
case "${IDFORGE_C_PROFILE:-release}" in
  release) cargo build -p idforge-c --release --locked ;;
  debug) cargo build -p idforge-c --locked ;;
  *) echo "error: IDFORGE_C_PROFILE is release or debug, not '$IDFORGE_C_PROFILE'" >&2; exit 2 ;;
esac
lib="$CARGO_TARGET_DIR/${IDFORGE_C_PROFILE:-release}"

install -d "$prefix/include" "$prefix/lib/pkgconfig"
install -m 644 include/idforge.h "$prefix/include/idforge.h"
install -m 755 "$lib/libidforge.so" "$prefix/lib/libidforge.so.$version"
ln -sf "libidforge.so.$version" "$prefix/lib/libidforge.so.$major"
ln -sf "libidforge.so.$major" "$prefix/lib/libidforge.so"
install -m 644 "$lib/libidforge.a" "$prefix/lib/libidforge.a"
for pc in idforge idforge-static; do
  sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" "packaging/c/$pc.pc.in" \
    >"$prefix/lib/pkgconfig/$pc.pc"
done
echo "installed idforge $version into $prefix"
