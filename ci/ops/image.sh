#!/usr/bin/env bash
# Builds the server's OCI image from the release's static servers and saves it in dist/:
#
#   ci/ops/image.sh [DIST]     (DIST: dist/ of this checkout by default)
#
# One image per architecture whose idforge-VERSION-ARCH-linux-musl.tar.gz is in DIST (x86_64 →
# linux/amd64, aarch64 → linux/arm64; FROM scratch, so no emulation is needed to build either),
# gathered in one multi-arch index and written as DIST/idforge-VERSION-image.oci.tar (an OCI
# archive, `podman load -i` or `skopeo copy oci-archive:…`), its index digest in
# DIST/idforge-VERSION-image.digest, and DIST/SHA256SUMS rewritten to cover both. The image's
# file times are the commit's (SOURCE_DATE_EPOCH), so the same commit gives the same layers.
# Needs podman (ci/install/install-deps.sh ops). Everything it makes in podman's storage (the
# builds, the index) is removed at exit: `podman load -i` the archive to run it.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dist=$(realpath "${1:-dist}")
version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
revision="$(git rev-parse HEAD 2>/dev/null || echo unknown)"
epoch="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
name="localhost/idforge:$version"
# The index in podman's storage, by a name of this run's (a loaded image may hold $name).
index="localhost/idforge-index:$version-$$"
archive="$dist/idforge-$version-image.oci.tar"

work=$(mktemp -d)
made=()
cleanup() {
  local image
  podman manifest rm "$index" >/dev/null 2>&1 || true
  for image in "${made[@]}"; do podman rmi -f "$image" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
podman manifest create "$index" >/dev/null

built=()
for arch in x86_64 aarch64; do
  tarball="$dist/idforge-$version-$arch-linux-musl.tar.gz"
  [ -f "$tarball" ] || continue
  case "$arch" in x86_64) platform=linux/amd64 ;; aarch64) platform=linux/arm64 ;; esac
  context="$work/$arch"
  root="$context/rootfs"
  mkdir -p "$root/usr/bin" "$root/etc" "$root/data" "$root/usr/share/doc/idforge"
  tar -xzf "$tarball" -C "$context"
  unpacked="$context/idforge-$version-$arch-linux-musl"
  install -m 0755 "$unpacked/idforge" "$root/usr/bin/idforge"
  cp "$unpacked"/LICENSE-* "$unpacked/README.md" "$root/usr/share/doc/idforge/"
  printf 'root:x:0:0:root:/:/sbin/nologin\nidforge:x:65532:65532:idforge:/data:/sbin/nologin\n' \
    >"$root/etc/passwd"
  printf 'root:x:0:\nidforge:x:65532:\n' >"$root/etc/group"
  find "$root" -exec touch -h -d "@$epoch" {} +
  image="localhost/idforge-build:$version-$arch"
  podman build --quiet --layers=false --platform "$platform" --timestamp "$epoch" \
    --build-arg VERSION="$version" --build-arg REVISION="$revision" \
    ${IDFORGE_IMAGE_SOURCE:+--build-arg SOURCE="$IDFORGE_IMAGE_SOURCE"} \
    -f packaging/container/Containerfile -t "$image" "$context" >/dev/null
  made+=("$image")
  podman manifest add "$index" "containers-storage:$image" >/dev/null
  built+=("$platform")
done
[ "${#built[@]}" -gt 0 ] || {
  echo "error: no idforge-$version-*-linux-musl.tar.gz in $dist (ci/dist/dist.sh static)" >&2
  exit 1
}

rm -f "$archive" "$archive.new"
podman manifest push --quiet --all --digestfile "$work/digest" "$index" "oci-archive:$archive.new:$name"
mv "$archive.new" "$archive"
cp "$work/digest" "$dist/idforge-$version-image.digest"
(cd "$dist" && rm -f SHA256SUMS && sha256sum -- * >SHA256SUMS.new && mv SHA256SUMS.new SHA256SUMS)
echo "image: $archive ($(stat -c %s "$archive") bytes; ${built[*]}; index $(cat "$work/digest"))"
