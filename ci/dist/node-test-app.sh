#!/usr/bin/env bash
# Lays out the Node suite outside the source tree, as ci/dist/dist-test.sh and
# ci/dist/windows-test.sh run it against an installed package: WORK/js/node/test (node/test),
# WORK/js/core/testdata (the shared vectors the suite reads as ../../core/testdata), and a
# package.json whose version is the package's (esm.test.mjs compares them). Prints the peers
# named, at the versions node/package.json pins for development, for `npm install`.
#
#   ci/dist/node-test-app.sh WORK VERSION PEER...
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
work="$1" version="$2"
shift 2
app="$work/js/node"
mkdir -p "$app" "$work/js/core"
cp -r node/test "$app/"
cp -r core/testdata "$work/js/core/"
printf '{ "name": "app", "version": "%s", "private": true }\n' "$version" >"$app/package.json"
(cd node && node -e '
  const d = require("./package.json").devDependencies
  console.log(process.argv.slice(1).map((n) => `${n}@${d[n]}`).join(" "))' "$@")
