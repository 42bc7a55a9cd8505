#!/usr/bin/env bash
# The declared minimum Rust version (`rust-version` in Cargo.toml) holds:
#  - with that toolchain installed (`rustup toolchain list`), `cargo +VERSION check` of every
#    shipped crate (core, runtime, server, the bindings);
#  - always: no locked dependency of a shipped crate (normal and build dependencies, all
#    features, host platform) declares a newer `rust-version`. Std APIs newer than ours are
#    caught by clippy's `incompatible_msrv` lint, which reads the same field (the clippy step).
# IDFORGE_MSRV=1.80 ci/steps/msrv.sh tries the dependency check against another version.
# This machine has one toolchain and can fetch no other; CI then runs the dependency check only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

msrv="${IDFORGE_MSRV:-$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -1)}"
[ -n "$msrv" ] || { echo "error: no rust-version in Cargo.toml" >&2; exit 1; }
shipped=(idforge-core idforge idforge-server idforge-c idforge-python idforge-node idforge-uniffi)

cargo metadata --format-version 1 --locked | python3 -c '
import json, sys
msrv, shipped = sys.argv[1], sys.argv[2:]
def v(s): return tuple(int(x) for x in (s.split(".") + ["0", "0"])[:3])
meta = json.load(sys.stdin)
pkgs = {p["id"]: p for p in meta["packages"]}
nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
todo = [i for i, p in pkgs.items() if p["name"] in shipped and i in meta["workspace_members"]]
seen, bad = set(todo), []
while todo:
    node = nodes[todo.pop()]
    for dep in node["deps"]:
        if all(k["kind"] == "dev" for k in dep["dep_kinds"]) or dep["pkg"] in seen:
            continue
        seen.add(dep["pkg"])
        todo.append(dep["pkg"])
for i in seen:
    rv = pkgs[i].get("rust_version")
    if rv and v(rv) > v(msrv):
        bad.append("%s %s needs Rust %s" % (pkgs[i]["name"], pkgs[i]["version"], rv))
if bad:
    sys.exit("error: rust-version is %s, but:\n  " % msrv + "\n  ".join(sorted(bad)))
print("    %d crates shipped or depended on; none needs a Rust newer than %s" % (len(seen), msrv))
' "$msrv" "${shipped[@]}"

if rustup toolchain list 2>/dev/null | grep -q "^$msrv"; then
  args=()
  for p in "${shipped[@]}"; do args+=(-p "$p"); done
  cargo "+$msrv" check --locked "${args[@]}"
  echo "    cargo +$msrv check passed"
else
  echo "    (no $msrv toolchain here: the build with it was not run; the dependency check above was)"
fi
