#!/usr/bin/env bash
# The docs step: every fenced code block of the documents a user reads (README.md, docs/*.md,
# python/README.md, node/README.md and the READMEs inside the C and PostgreSQL tarballs) is run as
# written, on the release artifacts of dist/ (ci/dist/dist.sh), or is marked as a fragment with its
# reason (ci/docs/blocks.py says how blocks are marked; ci/docs/docs_plugin.py how each language
# runs). pytest collects the blocks (one test each) and markdown-it-py finds them; a summary
# counts the blocks run and the fragments.
#
#   ci/docs.sh [FILE.md...] [-- PYTEST-ARGS...]     (default: every document above)
#
# Needs port 7379 free (the README's server) and dist/ built for this checkout's version; the
# Install lines install by name from local registries (IDFORGE_PYPI_INDEX, IDFORGE_NPM_REGISTRY,
# IDFORGE_CARGO_INDEX, IDFORGE_GO_PROXY_DIR: ci/release/registries.sh), started here when unset. Installs
# what it needs: JDK, JNA (ci/install/install-deps.sh jvm), PostgreSQL 15 and redis-cli (services), the
# Kotlin compiler (ci/install/install-kotlin.sh), Go (ci/install/go-env.sh), pytest and
# markdown-it-py (a venv under $IDFORGE_CACHE), and the TypeScripts users have
# (ci/install/install-typescripts.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CACHE="${IDFORGE_CACHE:-$HOME/.cache/idforge}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/target}"

docs=()
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do docs+=("$1"); shift; done
[ "${1:-}" != "--" ] || shift
[ "${#docs[@]}" -gt 0 ] ||
  docs=(README.md docs/*.md python/README.md node/README.md packaging/c/README.md packaging/postgres/README.md)

bash ci/install/install-deps.sh jvm services dist
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || bash ci/install/install-deps.sh node
kotlin_home="$(bash ci/install/install-kotlin.sh)"
# shellcheck source=install/go-env.sh
. ci/install/go-env.sh

venv="$CACHE/docs-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "pytest>=8,<9" "markdown-it-py>=3,<4"

typescripts="$(bash ci/install/install-typescripts.sh | tr '\n' :)"

# The registries the Install lines install from by name (ci/release/local-release.sh): the
# caller's (ci/test.sh starts them once per run), else a release of dist/ on registries of this
# run's own.
if [ -z "${IDFORGE_PYPI_INDEX:-}" ]; then
  registries="$(mktemp -d)"
  trap 'bash ci/release/registries.sh stop "$registries/reg"; rm -rf "$registries"' EXIT
  eval "$(IDFORGE_DIST_DIR="${IDFORGE_DOCS_DIST:-$PWD/dist}" bash ci/release/local-release.sh "$registries")"
fi

export IDFORGE_DOCS_DIST="${IDFORGE_DOCS_DIST:-$PWD/dist}"
export IDFORGE_DOCS_TYPESCRIPTS="$typescripts"
export IDFORGE_DOCS_KOTLINC="$kotlin_home/bin/kotlinc"
export IDFORGE_DOCS_KOTLIN_STDLIB="$kotlin_home/lib/kotlin-stdlib.jar"
export IDFORGE_DOCS_JNA=/usr/share/java/jna.jar
export IDFORGE_DOCS_GO="$IDFORGE_GO_BIN/go"
export IDFORGE_DOCS_CARGO_TARGET="$CARGO_TARGET_DIR"
export IDFORGE_DOCS_NPM_CACHE="$CACHE/npm"
export IDFORGE_DOCS_PIP_CACHE="$CACHE/pip"
export PYTHONPATH="$PWD/ci/docs${PYTHONPATH:+:$PYTHONPATH}"
"$venv/bin/pytest" -c ci/docs/pytest.ini --rootdir "$PWD" "${docs[@]}" "$@"
