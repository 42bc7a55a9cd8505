#!/usr/bin/env bash
# tinyid's own Java client (tinyid-client from github.com/didi/tinyid at a fixed commit, its
# sources compiled unchanged with javac: it needs only the JDK) takes ids from `idforge serve`'s
# HTTP API with a token mapped to a user, while redis-cli takes INCRs of the same tag: every id
# distinct. The sources are cloned once into ~/.cache/idforge/tinyid (from IDFORGE_TINYID_GIT, by
# default GitHub's); without network and without them the check is skipped (failed under
# IDFORGE_REQUIRE_SERVICES).
#
#   ci/harness/tinyid-client.sh [path/to/idforge]
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
target=${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}
bin=${1:-$target/debug/idforge}
commit=49976d37222ab1089a8c413b4520cc55d105d428
src=$HOME/.cache/idforge/tinyid

skip() {
  [ -z "${IDFORGE_REQUIRE_SERVICES:-}" ] || { echo "tinyid-client: $1" >&2; exit 1; }
  echo "    tinyid-client skipped: $1"
  exit 0
}
command -v javac >/dev/null 2>&1 || skip "no JDK (ci/install/install-deps.sh jvm)"
if [ ! -d "$src/.git" ]; then
  git clone --quiet "${IDFORGE_TINYID_GIT:-https://github.com/didi/tinyid}" "$src" 2>/dev/null ||
    skip "cannot clone didi/tinyid"
fi
git -C "$src" checkout --quiet "$commit" 2>/dev/null || skip "no commit $commit in $src"

work=$(mktemp -d)
pid=""
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/classes"
javac -nowarn -d "$work/classes" ci/harness/tinyid/ClientCheck.java \
  $(find "$src/tinyid-base/src/main/java" "$src/tinyid-client/src/main/java" -name '*.java') 2>/dev/null

token=0f673adf80504e2eaa552f5d791b644c
printf '%s app\n' "$(printf %s "$token" | sha256sum | cut -d' ' -f1)" >"$work/tokens"
http=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" serve --port 0 --port-file "$work/port" --data-dir "$work/data" --http-port "$http" \
  --http-tokens "$work/tokens" --requirepass pw --log warn 2>"$work/log" &
pid=$!
for _ in $(seq 150); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
cli() { redis-cli -p "$port" -a pw --no-auth-warning "$@"; }
[ "$(cli IDF.USER SET app app-pw alloc:orders)" = OK ]
printf 'tinyid.server=127.0.0.1:%s\ntinyid.token=%s\n' "$http" "$token" >"$work/classes/tinyid_client.properties"

(for _ in $(seq 300); do cli INCR orders; done) >"$work/resp.ids" &
resp=$!
java -cp "$work/classes" ClientCheck 4 5000 >"$work/java.ids" 2>"$work/java.log"
wait "$resp"
segments=$(grep -c 'getNextSegmentId end, response:[0-9]' "$work/java.log")
ids=$(wc -l <"$work/java.ids")
dups=$(sort -n "$work/java.ids" "$work/resp.ids" | uniq -d | wc -l)
[ "$ids" = 20040 ] && [ "$(wc -l <"$work/resp.ids")" = 300 ] && [ "$dups" = 0 ] && [ "$segments" -gt 0 ] || {
  echo "tinyid-client: $ids ids, $dups duplicates, $segments segments" >&2
  tail -20 "$work/java.log" >&2
  exit 1
}
echo "    tinyid-client (unchanged, $commit): $ids ids from $segments segments + 300 RESP INCRs, 0 duplicates"
