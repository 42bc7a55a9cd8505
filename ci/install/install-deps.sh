#!/usr/bin/env bash
# Installs the system packages the tests and benches need, only those missing (idempotent; a
# no-op on a machine that has them). Debian/Ubuntu (apt-get); run as root or with sudo.
#
#   ci/install/install-deps.sh GROUP...     groups: c (C tests), bench-c (C benchmark), node (only when
#                                   no node/npm is on PATH), services (PostgreSQL, MariaDB,
#                                   Redis servers and clients, openssl for test certificates),
#                                   jvm (JDK, JNA, Gson and the PostgreSQL and SQLite JDBC drivers, for ci/steps/jvm.sh), dist (objdump and
#                                   strip, a C compiler, pkg-config, redis-cli and venv: ci/dist/dist.sh
#                                   and ci/dist/dist-test.sh), etcd (etcd server and etcdctl, for the
#                                   HA tests and server/tests/harness/failover-harness.sh), pgext (PostgreSQL 15's
#                                   server headers and libclang, for the extension's pgrx build),
#                                   chaos (ip, iptables, ping and libfaketime: server/tests/harness/chaos.sh),
#                                   faketime (libfaketime alone: server/tests/lease_clocks.rs),
#                                   http (curl and headless Chromium: server/tests/harness/http-harness.sh),
#                                   wrk (the HTTP load generator of bench/http.sh), cross (Debian's
#                                   Rust 1.96 with its std source, for -Zbuild-std of the aarch64 and
#                                   musl artifacts; aarch64 binutils and glibc headers), emulation
#                                   (qemu-user-static, mmdebstrap and the arch-test it checks emulation
#                                   with: the aarch64 Debian root that
#                                   ci/dist/dist-test.sh --arch aarch64 runs the artifacts in), maven
#                                   (Maven with Debian's repository of its plugins and JNA, gnupg:
#                                   ci/release/by-name-test.sh maven), ops
#                                   (podman with runc, Prometheus and promtool, etcd, redis-cli:
#                                   ci/ops/ops-test.sh), windows (Debian's Rust with its std source,
#                                   mingw-w64, Wine 8, redis-cli and pkg-config: ci/dist/windows.sh and windows-test.sh)
set -euo pipefail

declare -A PACKAGES=(
  [c]="gcc g++ make pkg-config valgrind python3"
  [bench-c]="gcc pkg-config libbson-dev"
  [node]="nodejs npm util-linux"
  [services]="postgresql mariadb-server mariadb-client redis-server redis-tools openssl"
  [jvm]="openjdk-17-jdk-headless libjna-java libjna-jni libgoogle-gson-java libpostgresql-jdbc-java libxerial-sqlite-jdbc-java"
  [dist]="binutils gcc pkg-config redis-tools python3-venv"
  [etcd]="etcd-server etcd-client"
  [pgext]="postgresql postgresql-server-dev-15 libclang-dev python3-venv"
  [chaos]="iproute2 iptables iputils-ping faketime libfaketime"
  [faketime]="faketime libfaketime"
  [http]="curl chromium python3-venv"
  [wrk]="wrk"
  [cross]="rustc-web cargo-web rust-web-src rust-web-clippy binutils-aarch64-linux-gnu libc6-dev-arm64-cross"
  [emulation]="qemu-user-static mmdebstrap arch-test libc6-arm64-cross"
  [maven]="maven openjdk-17-jdk-headless libjna-java libmaven-compiler-plugin-java libmaven-resources-plugin-java libmaven-jar-plugin-java libmaven-dependency-plugin-java libsurefire-java libmaven-install-plugin-java gnupg"
  [windows]="rustc-web cargo-web rust-web-src gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64 wine64 redis-tools pkg-config python3-venv"
  [ops]="podman runc prometheus iproute2 iptables etcd-server etcd-client redis-tools curl python3-venv"
)

missing=()
for group in "$@"; do
  [ -n "${PACKAGES[$group]+x}" ] || { echo "error: unknown group '$group'" >&2; exit 2; }
  for pkg in ${PACKAGES[$group]}; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
done
[ "${#missing[@]}" -eq 0 ] && exit 0

echo "    installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
