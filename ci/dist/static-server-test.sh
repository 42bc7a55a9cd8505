#!/usr/bin/env bash
# Tests the fully static servers of ci/dist/dist.sh (idforge-VERSION-ARCH-linux-musl.tar.gz) as a
# `FROM scratch` container runs them: each binary alone in an empty root (the binary, a data
# folder and /dev/null; no libraries, no loader, no /etc, /proc or /tmp), started there by chroot.
#   - the tarball carries README.md, CHANGELOG.md and both licences;
#   - the binary's machine is ARCH's, and it has no program interpreter or dynamic section;
#   - in the empty root: `idforge gen snowflake` prints ids; `idforge serve` answers
#     `redis-cli INCR` from outside the root (1, 2), exits 0 on SIGTERM, and a restart continues
#     the sequence (3: a clean stop gave its cache back);
#   - the root holds nothing else afterwards but what the server wrote in its data folder.
# aarch64 runs under qemu-user through binfmt_misc, registered by ci/dist/arm64-root.sh binfmt with
# qemu's F flag (the interpreter is opened when it is registered, so it runs inside an empty root).
#
#   ci/dist/static-server-test.sh [ARCH...]     (default: x86_64 aarch64)
#
# Needs root (chroot, mknod).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
dist="${IDFORGE_DIST_DIR:-dist}"
# shellcheck source=ci/dist/served.sh
. ci/dist/served.sh
version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
arches=("$@")
[ "$#" -gt 0 ] || arches=(x86_64 aarch64)
[ "$(id -u)" -eq 0 ] || { echo "error: ci/dist/static-server-test.sh needs root (chroot)" >&2; exit 1; }
chroot="$(command -v chroot)"
command -v redis-cli >/dev/null || { echo "error: redis-cli not found (ci/install/install-deps.sh dist)" >&2; exit 1; }

scratch_and_server_cleanup # served.sh: $work, $server_pid

machine() {
  case "$1" in
    x86_64) echo "Advanced Micro Devices X86-64" ;;
    aarch64) echo "AArch64" ;;
    *) echo "error: unknown architecture '$1'" >&2; return 1 ;;
  esac
}

test_static() {
  local arch="$1" name="idforge-$version-$1-linux-musl" root got headers port left
  [ -f "$dist/$name.tar.gz" ] || { echo "error: no $dist/$name.tar.gz (ci/dist/dist.sh static)" >&2; return 1; }
  [ "$arch" = x86_64 ] || bash ci/dist/arm64-root.sh binfmt
  tar -xzf "$dist/$name.tar.gz" -C "$work"
  for f in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE idforge idforge.toml; do
    [ -f "$work/$name/$f" ] || { echo "error: $name.tar.gz lacks $f" >&2; return 1; }
  done
  got="$(readelf -h "$work/$name/idforge" | sed -n 's/^ *Machine: *//p')"
  [ "$got" = "$(machine "$arch")" ] || { echo "error: $name's idforge is for '$got'" >&2; return 1; }
  headers="$(readelf -l -W "$work/$name/idforge" | awk '$1 == "INTERP" || $1 == "DYNAMIC" { print $1 }')"
  [ -z "$headers" ] || { echo "error: $name's idforge has $headers program headers" >&2; return 1; }

  # The empty root: the binary, its data folder, /dev/null.
  root="$work/root-$arch"
  install -d "$root/data" "$root/dev"
  install -m 755 "$work/$name/idforge" "$root/idforge"
  mknod -m 666 "$root/dev/null" c 1 3
  in_root() { env -i "$chroot" "$root" /idforge "$@"; }

  in_root gen snowflake --count 3 >"$work/ids"
  [ "$(wc -l <"$work/ids")" -eq 3 ] || { echo "error: gen printed: $(cat "$work/ids")" >&2; return 1; }

  start() {
    rm -f "$root/data/port"
    env -i "$chroot" "$root" /idforge serve --data-dir /data --bind 127.0.0.1 --port 0 \
      --port-file /data/port >>"$work/server-$arch.log" 2>&1 &
    server_pid=$!
    wait_port "$server_pid" "$root/data/port" "$work/server-$arch.log"
    port="$(cat "$root/data/port")"
  }
  stop() {
    stop_served "$server_pid" "$work/server-$arch.log"
    server_pid=""
  }
  incr_across_restart start stop redis-cli
  # Nothing was written outside the data folder.
  left="$(cd "$root" && find . ! -path './data*' ! -type d ! -name idforge ! -path ./dev/null)"
  [ -z "$left" ] || { echo "error: the static server wrote outside /data: $left" >&2; return 1; }
  echo "static ($arch): $(readelf -h "$root/idforge" | sed -n 's/^ *Machine: *//p'), no INTERP/DYNAMIC; in an empty root: gen, serve + redis-cli INCR 1 2 | SIGTERM | restart, INCR 3"
}

for arch in "${arches[@]}"; do
  echo "==> static server ($arch)"
  test_static "$arch"
done
