#!/usr/bin/env bash
# Packs node/ with `npm pack` (after `npm run build`) and installs the tarball into an empty
# temporary project, where both `require('idforge')` and `import` must work and the package's
# usage file (test/types/usage.ts, every declaration) must type-check with `tsc --strict`
# (TypeScript 5.x, 6.x and the current 7, from the npm registry). The READMEs' Node and
# TypeScript blocks run in the docs step (ci/docs.sh), on the release package.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../node"
node_dir="$PWD"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tarball="$(npm pack --silent --pack-destination "$work")"
mkdir "$work/app"
cd "$work/app"
npm init -y >/dev/null
npm install --no-audit --no-fund --silent "$work/$tarball"

node -e '
const idforge = require("idforge")
const g = new idforge.Snowflake({ nodeId: 1 })
const a = g.next(), b = g.next()
if (!(typeof a === "bigint" && a < b)) throw new Error("require: bad ids")
if (new idforge.ObjectId().toHexString().length !== 24) throw new Error("require: bad ObjectId")
console.log("require ok", a)
'
node --input-type=module -e '
import idforge, { Snowflake, ObjectId, Flake128, ErrorCode } from "idforge"
const g = new Snowflake()
if (typeof g.next() !== "bigint") throw new Error("import: bad id")
if (idforge.ObjectId !== ObjectId) throw new Error("import: default and named exports differ")
try { ObjectId.fromHex("zz") } catch (e) { if (e.code !== ErrorCode.INVALID_HEX) throw e }
console.log("import ok", new Flake128().toBase62())
'
# idforge/drizzle/pg and /sqlite ship, and drizzle-orm is an optional peer: installing idforge alone pulled
# in no ORM, and the helper says what to install.
[ ! -e node_modules/drizzle-orm ] || { echo "error: installing idforge installed drizzle-orm" >&2; exit 1; }
node -e '
for (const helper of ["idforge/drizzle/pg", "idforge/drizzle/sqlite"]) {
  try { require(helper); throw new Error(helper + " loaded without drizzle-orm") } catch (e) {
    if (!/npm install drizzle-orm/.test(e.message)) throw e
  }
  console.log(helper + ": asks for drizzle-orm")
}
'
# The package declares its types.
test -f node_modules/idforge/index.d.ts
node -e 'const p = require("idforge/package.json"); if (p.types !== "index.d.ts") process.exit(1)'

# TypeScript: the package's declarations type-check with --strict in this fresh project (no
# tsconfig, no @types/node of its own: the package brings it), under each TypeScript users have
# (ci/install/install-typescripts.sh). The package's own usage file covers every declaration.
cp "$node_dir/test/types/usage.ts" ./usage.ts
for tsc in $(bash "$node_dir/../ci/install/install-typescripts.sh"); do
  "$tsc" --strict --noEmit --module nodenext --target es2022 --skipLibCheck false ./usage.ts
  echo "TypeScript $("$tsc" --version): test/types/usage.ts ok"
done
