#!/usr/bin/env bash
# Packs node/ with `npm pack` (after `npm run build`) and installs the tarball into an empty
# temporary project, where both `require('idforge')` and `import` must work, the READMEs' Node
# blocks must run as written and their TypeScript must type-check with `tsc --strict` (TypeScript
# 5.x, 6.x and the current 7, from the npm registry).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../node"
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
# The package declares its types.
test -f node_modules/idforge/index.d.ts
node -e 'const p = require("idforge/package.json"); if (p.types !== "index.d.ts") process.exit(1)'

# The Node blocks of the READMEs, run as written in this project (the package as a user has it):
# README.md's "Use from Node.js" section and node/README.md (the npm package's). A ```js block is
# CommonJS (run as .cjs), ```mjs an ES module (.mjs), ```ts a TypeScript file (type-checked
# below); each must end on its own within a minute (nothing left holding the event loop). The
# segment blocks name the server of README "The segment server", first steps
# (idforge://app:pw@127.0.0.1:7379); here they reach the test services' server instead.
blocks="$work/blocks"
mkdir "$blocks"
node - "$blocks" "$node_dir/../README.md" "$node_dir/README.md" <<'JS'
const { readFileSync, writeFileSync } = require('node:fs')
const [out, readme, packageReadme] = process.argv.slice(2)
const sources = [
  ['readme', readFileSync(readme, 'utf8').split(/^## Use from Node\.js$/m)[1].split(/^## /m)[0]],
  ['package', readFileSync(packageReadme, 'utf8')],
]
const ext = { js: 'cjs', mjs: 'mjs', ts: 'ts' }
let n = 0
for (const [name, text] of sources) {
  for (const m of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    if (!(m[1] in ext)) continue
    writeFileSync(`${out}/${name}-${++n}.${ext[m[1]]}`, m[2])
  }
}
if (n < 5) throw new Error(`only ${n} Node blocks found in the READMEs`)
JS
segments_url='idforge://app:pw@127.0.0.1:7379'
for block in "$blocks"/*.cjs "$blocks"/*.mjs; do
  cp "$block" "./$(basename "$block")"
  if grep -q "$segments_url" "$block"; then
    if [ -z "${IDFORGE_TEST_IDFORGE_URL:-}" ]; then
      if [ -n "${IDFORGE_REQUIRE_SERVICES:-}" ]; then
        echo "error: IDFORGE_TEST_IDFORGE_URL is not set" >&2
        exit 1
      fi
      echo "skipped $(basename "$block"): no segment server (IDFORGE_TEST_IDFORGE_URL)"
      continue
    fi
    sed -i "s|$segments_url|$IDFORGE_TEST_IDFORGE_URL|" "./$(basename "$block")"
  fi
  out="$(timeout 60 node "./$(basename "$block")")" || {
    echo "error: the README block $(basename "$block") failed:" >&2
    cat "$block" >&2
    exit 1
  }
  # The error line the blocks show in a comment.
  if grep -q 'IDFORGE_INVALID_HEX 6' "$block"; then
    grep -q '^IDFORGE_INVALID_HEX 6 ' <<<"$out" || {
      echo "error: $(basename "$block") printed no 'IDFORGE_INVALID_HEX 6 …' line:" >&2
      echo "$out" >&2
      exit 1
    }
  fi
  echo "README block $(basename "$block") ok"
done

# TypeScript: the package's declarations type-check with --strict in this fresh project (no
# tsconfig, no @types/node of its own: the package brings it), under the TypeScript users have:
# the last 5.x, the last 6.x and the current release (7). Raise the pins with new releases.
typescripts=(5.9.3 6.0.3 7.0.2)
for ts in "${typescripts[@]}"; do
  npm install --prefix "$work/ts-$ts" --no-audit --no-fund --silent "typescript@$ts"
  tsc="$work/ts-$ts/node_modules/.bin/tsc"
  for block in "$blocks"/*.ts; do
    name="$(basename "$block" .ts)"
    # As the user typed it (TypeScript's defaults: CommonJS output), then as an ES module.
    cp "$block" "./$name.ts"
    "$tsc" --strict --noEmit "./$name.ts"
    cp "$block" "./$name.mts"
    "$tsc" --strict --noEmit --module nodenext --target es2022 "./$name.mts"
    echo "TypeScript $ts: $name ok"
  done
  # The package's own usage file covers every declaration.
  cp "$node_dir/test/types/usage.ts" ./usage.ts
  "$tsc" --strict --noEmit --module nodenext --target es2022 --skipLibCheck false ./usage.ts
  echo "TypeScript $ts: test/types/usage.ts ok"
done
