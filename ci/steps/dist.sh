#!/usr/bin/env bash
# The dist step: waits for the dist prebuild (ci/prebuild.sh) when one runs, then ci/dist/dist.sh
# (the release artifacts in dist/ for x86_64 and aarch64 Linux and Windows x86_64; see its header)
# and their tests as users get them: ci/dist/dist-test.sh for x86_64 and, under qemu-user in an
# arm64 Debian root, for aarch64; ci/dist/static-server-test.sh for the static servers. Own target
# dir: $CARGO_TARGET_DIR/artifacts (Debian's toolchain: $CARGO_TARGET_DIR/artifacts/cross and
# cross-win-mac).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

# shellcheck source=ci/prebuild.sh
. ci/prebuild.sh
wait_dist_prebuild
dist_deps
# The uniffi-bindgen of the jvm step, when it ran (else ci/dist/dist.sh builds it).
bindgen="$CARGO_TARGET_DIR/debug/uniffi-bindgen"
[ -x "$bindgen" ] || bindgen=""
# The lanes the macos and windows steps find deferred.
echo "$dist_deferred" >"$IDFORGE_CI_NOTES/deferred"
if [ -n "$dist_deferred" ]; then
  # Out of time (a cold cache; the cross lane is the last one): the host's artifacts and what
  # else was built, and a line in the summary.
  note "deferred: $dist_deferred (cross: the musl servers, the aarch64 artifacts) not built in" \
    "time: neither built nor tested in this run"
  artifacts=(server c python node jvm pgext)
  [[ " $dist_deferred " == *" windows "* ]] || artifacts+=(windows)
  IDFORGE_DIST_ARCHES=x86_64 UNIFFI_BINDGEN="$bindgen" CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" \
    bash ci/dist/dist.sh "${artifacts[@]}"
  bash ci/dist/dist-test.sh
  exit 0
fi
UNIFFI_BINDGEN="$bindgen" CARGO_TARGET_DIR="$CARGO_TARGET_DIR/artifacts" bash ci/dist/dist.sh
# The tests in three lanes at once: x86_64's then the static servers', and the aarch64 suites
# under emulation in two halves (each about 2 minutes warm; qemu runs a program on one core),
# bounded: their mounts live in namespaces of their own, so a kill leaves none behind. Each
# test has a scratch folder, servers on ports of their own and tags of its own in the services.
# The aarch64 root is made (and qemu registered) first, once, for both.
bash ci/dist/arm64-root.sh path >/dev/null
logs="$(mktemp -d)"
pids=()
rc=0
(bash ci/dist/dist-test.sh && bash ci/dist/static-server-test.sh) >"$logs/x86_64" 2>&1 &
pids+=($!)
timeout -k 30 900 bash ci/dist/dist-test.sh --arch aarch64 python node >"$logs/aarch64-a" 2>&1 &
pids+=($!)
timeout -k 30 900 bash ci/dist/dist-test.sh --arch aarch64 server c jvm pgext >"$logs/aarch64-b" 2>&1 &
pids+=($!)
for lane in x86_64 aarch64-a aarch64-b; do
  wait "${pids[0]}" || { rc=$?; echo "    dist tests: the $lane lane failed (exit $rc)"; }
  pids=("${pids[@]:1}")
done
for lane in x86_64 aarch64-a aarch64-b; do
  echo "---- dist tests: $lane"
  cat "$logs/$lane"
done
rm -rf "$logs"
exit "$rc"
