#!/usr/bin/env bash
# The Go module as a module proxy serves it (GOPROXY protocol: <module>/@v/list, vX.info, vX.mod,
# vX.zip), made from bindings/go and the C tarballs and zip of dist/: the package's sources (no
# tests, no bench module), the licences, include/idforge.h, and lib/linux_amd64/libidforge.a,
# lib/linux_arm64/libidforge.a and lib/windows_amd64/libidforge.a, with the link files of
# ci/release/go/ in place of the checkout's (the carried library on those three; pkg-config
# elsewhere). A user's
# `go get idforge.dev/idforge@vX` then builds with no C library installed and no PKG_CONFIG_PATH.
# The zip is deterministic (fixed times, sorted entries).
#
#   ci/release/go-module.sh DIST_DIR PROXY_DIR     (adds this version to PROXY_DIR)
set -euo pipefail
dist="$(cd "$1" && pwd)"
proxy="$2"
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"

module="$(sed -n 's/^module //p' bindings/go/go.mod)"
version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
v="v$version"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/$module@$v"
mkdir -p "$root/include"

for f in bindings/go/*.go bindings/go/bridge.h bindings/go/go.mod bindings/go/README.md; do
  case "$(basename "$f")" in
    *_test.go | link_shared.go | link_static.go) continue ;;
  esac
  cp "$f" "$root/"
done
for f in ci/release/go/*.go.in; do
  n="$(basename "$f" .in)"
  cp "$f" "$root/$n"
done
cp LICENSE-MIT LICENSE-APACHE "$root/"
cp include/idforge.h "$root/include/"

found=0
for pair in x86_64:linux_amd64 aarch64:linux_arm64; do
  arch="${pair%%:*}" goarch="${pair#*:}"
  tarball="$dist/idforge-c-$version-$arch-linux-gnu.tar.gz"
  if [ ! -f "$tarball" ]; then
    echo "    go: no $tarball: the module carries no $goarch library" >&2
    continue
  fi
  x="$work/unpacked-$arch"
  mkdir -p "$x" "$root/lib/$goarch"
  tar -xzf "$tarball" -C "$x" --strip-components=1
  cmp -s "$x/include/idforge.h" "$root/include/idforge.h" ||
    { echo "error: $tarball's idforge.h is not this checkout's" >&2; exit 1; }
  mv "$x/lib/libidforge.a" "$root/lib/$goarch/libidforge.a"
  rm -rf "$x"
  found=$((found + 1))
done
# windows/amd64: libidforge.a of the C zip (mingw-w64's, as cgo's gcc on Windows is).
zip="$dist/idforge-c-$version-x86_64-windows-gnu.zip"
if [ -f "$zip" ]; then
  mkdir -p "$root/lib/windows_amd64"
  python3 - "$zip" "$root" <<'EOF'
import sys, zipfile
src, root = sys.argv[1:3]
with zipfile.ZipFile(src) as z:
    top = z.namelist()[0].split("/")[0]
    if z.read(f"{top}/include/idforge.h") != open(f"{root}/include/idforge.h", "rb").read():
        sys.exit(f"error: {src}'s idforge.h is not this checkout's")
    with open(f"{root}/lib/windows_amd64/libidforge.a", "wb") as out:
        out.write(z.read(f"{top}/lib/libidforge.a"))
EOF
  found=$((found + 1))
else
  echo "    go: no $zip: the module carries no windows_amd64 library" >&2
fi
[ "$found" -gt 0 ] || { echo "error: no C tarball in $dist" >&2; exit 1; }

dest="$proxy/$module/@v"
mkdir -p "$dest"
python3 - "$work" "$module@$v" "$dest/$v.zip" <<'EOF'
import os, sys, zipfile
base, prefix, out = sys.argv[1], sys.argv[2], sys.argv[3]
paths = []
for d, _, files in os.walk(os.path.join(base, prefix)):
    for f in files:
        paths.append(os.path.relpath(os.path.join(d, f), base))
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for p in sorted(paths):
        info = zipfile.ZipInfo(p, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        with open(os.path.join(base, p), "rb") as f:
            z.writestr(info, f.read())
EOF
cp "$root/go.mod" "$dest/$v.mod"
# The release's time: the commit's, so that the same commit gives the same files.
when="$(git -C "$repo" log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)"
printf '{"Version":"%s","Time":"%s"}\n' "$v" "$(date -u -d "$when" +%FT%TZ)" >"$dest/$v.info"
{ cat "$dest/list" 2>/dev/null || true; echo "$v"; } | sort -uV >"$dest/list.new"
mv "$dest/list.new" "$dest/list"
printf '    %-40s %9d bytes (%s)\n' "$module@$v.zip" "$(stat -c %s "$dest/$v.zip")" "$found platform libraries"
