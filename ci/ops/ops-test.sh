#!/usr/bin/env bash
# The server as operators run it, tested against the real things (loopback only):
#
#   ci/ops/ops-test.sh [DIST]     (DIST: dist/ of this checkout by default)
#   IDFORGE_BIN=path/to/idforge ci/ops/ops-test.sh --no-image
#                                 (no static server built: steps 1 and 5 only, the settings
#                                 asked of that binary)
#
# 1. the alert rules: promtool check rules and promtool test rules (deploy/prometheus/);
# 2. the image: ci/ops/image.sh builds it from DIST's static servers into
#    DIST/idforge-VERSION-image.oci.tar, which is then `podman load`ed as a user would;
# 3. ci/ops/containers.py: one server container (redis-cli, the HTTP API, not root, its data
#    surviving a new container on the volume) and an HA group of three containers on an etcd
#    beside them, through `podman kill`s of the leader: 0 duplicate ids;
# 4. ci/ops/prometheus_check.py: a real Prometheus scraping the container under load returns
#    series for every query of deploy/grafana/idforge-dashboard.json, and evaluates every rule;
# 5. ci/ops/manifests_check.py: every overlay of deploy/kubernetes rendered by kubectl kustomize
#    and its objects checked (also pinned to the image's digest);
# 6. the index's arm64 image pulled and started under qemu-user (INCR answered), when the host
#    has qemu's binfmt for aarch64 (the dist step registers it).
# Then it checks that nothing is left: no container of the run, no volume (named or anonymous)
# or network interface or iptables rule that was not there before, no loaded image. podman runs
# with the host's network only (never its bridge). Needs root (rootful podman), and kubectl on
# PATH.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
no_image=0
if [ "${1:-}" = --no-image ]; then
  no_image=1
  shift
fi
dist=$(realpath "${1:-dist}")
version="$(sed -n 's/^#define IDFORGE_VERSION_STRING "\(.*\)"$/\1/p' include/idforge.h)"
bash ci/install/install-deps.sh ops
command -v kubectl >/dev/null || {
  echo "error: kubectl is not on PATH (https://kubernetes.io/docs/tasks/tools/)" >&2
  exit 1
}
# PyYAML for the manifest check, pinned, in a venv of its own.
venv="$HOME/.cache/idforge/ops-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import yaml' 2>/dev/null || "$venv/bin/pip" install --quiet "PyYAML==6.0.3"

state() { # the host's network state, to compare before and after
  ip -o link show | awk -F': ' '{print $2}' | sort
  iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9:]*\]//' || true
}
before=$(state)
volumes_before=$(podman volume ls --quiet | sort)
work=$(mktemp -d)
image="localhost/idforge:$version"
trap 'podman rmi --force "$image" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

echo "---- alert rules"
promtool check rules deploy/prometheus/idforge-alerts.yml
(cd deploy/prometheus && promtool test rules idforge-alerts.test.yml)

if [ "$no_image" = 1 ]; then
  echo "---- kubernetes manifests (the settings of $IDFORGE_BIN)"
  "$venv/bin/python" ci/ops/manifests_check.py --binary "${IDFORGE_BIN:?}" "sha256:$(printf '0%.0s' {1..64})"
  exit 0
fi

echo "---- image"
podman rmi --force "$image" >/dev/null 2>&1 || true
bash ci/ops/image.sh "$dist"
podman load --quiet -i "$dist/idforge-$version-image.oci.tar"
echo "size: $(podman image inspect --format '{{.Size}}' "$image") bytes unpacked"

echo "---- containers"
python3 ci/ops/containers.py "$image" "$work/containers" --rounds "${OPS_ROUNDS:-5}"

echo "---- prometheus and the dashboard"
python3 ci/ops/prometheus_check.py "$image" deploy/grafana/idforge-dashboard.json \
  deploy/prometheus/idforge-alerts.yml "$work/prometheus"

echo "---- kubernetes manifests"
"$venv/bin/python" ci/ops/manifests_check.py "$image" "$(cat "$dist/idforge-$version-image.digest")"

# The index's arm64 image, under qemu-user (binfmt, registered by ci/dist/arm64-root.sh).
podman rmi --force "$image" >/dev/null
if [ -f "$dist/idforge-$version-aarch64-linux-musl.tar.gz" ]; then
  if [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
    echo "---- the arm64 image under qemu-user"
    podman pull --quiet --arch arm64 "oci-archive:$dist/idforge-$version-image.oci.tar" >/dev/null
    python3 ci/ops/containers.py "$image" "$work/arm64" --smoke arm64
    podman rmi --force "$image" >/dev/null
  else
    echo "---- the arm64 image: built, not run (no qemu-user binfmt for aarch64 on this host)"
  fi
fi
after=$(state)
if [ "$before" != "$after" ]; then
  echo "error: the host's network changed:" >&2
  diff <(echo "$before") <(echo "$after") >&2 || true
  exit 1
fi
left=$(podman ps --all --format '{{.Names}}' | grep '^idforge-ops-' || true)
[ -z "$left" ] || { echo "error: containers left: $left" >&2; exit 1; }
# No volume left either, named or anonymous (the image's VOLUME makes one per run without -v).
volumes_after=$(podman volume ls --quiet | sort)
[ "$volumes_before" = "$volumes_after" ] ||
  { echo "error: volumes left: $(comm -13 <(echo "$volumes_before") <(echo "$volumes_after"))" >&2; exit 1; }
echo "ops: ok (nothing left running; the network as it was)"
