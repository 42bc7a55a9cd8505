#!/usr/bin/env bash
# Regenerates every generated file that is committed and fails when one differs:
#   the error lists            ci/gen/gen_errors.py from core/testdata/errors.json:
#                              core/src/error_code.rs (the core's ErrorCode),
#                              python/idforge/_errors.py, bindings/c/src/status_codes.rs,
#                              bindings/uniffi/src/error_codes.rs,
#                              bindings/uniffi/kotlin/IdforgeCodes.kt, bindings/go/codes.go
#                              (compared first: the header is made from the C crate with the fresh
#                              list)
#   include/idforge.h          cbindgen (pinned below, installed on first use) from bindings/c
#   the shared vectors         core/testdata/gen_snowflake.py, gen_uuid7_ulid.py, gen_id_text.py (independent
#                              Python models) -> snowflake.json, uuid7.json, ulid.json
#
#   ci/gen/check-generated.sh           check: exit 1 and show the diff when a file drifted
#   ci/gen/check-generated.sh --write   rewrite the files
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."

CBINDGEN_VERSION=0.29.4
TOOLS="${IDFORGE_TOOLS:-$HOME/.cache/idforge/tools}"

mode=check
case "${1:-}" in
  --write) mode=write ;;
  "") ;;
  *) echo "usage: ci/gen/check-generated.sh [--write]" >&2; exit 2 ;;
esac

cbindgen="$TOOLS/bin/cbindgen"
if ! "$cbindgen" --version 2>/dev/null | grep -qx "cbindgen $CBINDGEN_VERSION"; then
  echo "    installing cbindgen $CBINDGEN_VERSION into $TOOLS"
  # --debug: it reads a few files once per run; a cold cache compiles it in about half the time
  # of a release build, and shares proc-macro2, syn and serde's builds with the workspace's.
  cargo install cbindgen --version "=$CBINDGEN_VERSION" --locked --quiet --debug --root "$TOOLS"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

drift=0
compare() { # compare GENERATED COMMITTED
  if [ "$mode" = write ]; then
    if ! cmp -s "$1" "$2"; then
      cp "$1" "$2"
      echo "    wrote $2"
    fi
  elif ! diff -u "$2" "$1"; then
    echo "error: $2 is out of date; run ci/gen/check-generated.sh --write and commit it" >&2
    drift=1
  fi
}
python3 ci/gen/gen_errors.py "$tmp/gen"
for list in $(python3 ci/gen/gen_errors.py --list); do
  compare "$tmp/gen/$list" "$list"
done

# The version macros come from the crate's version, never from hand-written text.
version="$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json,sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"]=="idforge-c"))')"
IFS=.- read -r major minor patch _ <<<"$version"
macros="\\\\n/** The version of this header; idforge_version() gives the linked library's. */\\\\n#define IDFORGE_VERSION_MAJOR $major\\\\n#define IDFORGE_VERSION_MINOR $minor\\\\n#define IDFORGE_VERSION_PATCH $patch\\\\n#define IDFORGE_VERSION_STRING \\\\\"$version\\\\\""
sed "s|@IDFORGE_VERSION_MACROS@|$macros|" bindings/c/cbindgen.toml >"$tmp/cbindgen.toml"
"$cbindgen" --quiet --config "$tmp/cbindgen.toml" --crate idforge-c --output "$tmp/idforge.h" bindings/c

compare "$tmp/idforge.h" include/idforge.h

# The shared vectors made by independent models in core/testdata/.
for model in gen_snowflake.py gen_uuid7_ulid.py gen_id_text.py; do
  if [ "$mode" = write ]; then
    python3 "core/testdata/$model"
  elif ! python3 "core/testdata/$model" --check; then
    echo "error: core/testdata/$model's output differs from the committed vectors" >&2
    drift=1
  fi
done
[ "$drift" -eq 0 ] && [ "$mode" = check ] && echo "    generated files are up to date"
exit "$drift"
