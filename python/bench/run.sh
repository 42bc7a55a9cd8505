#!/usr/bin/env bash
# Runs python/bench/bench_ids.py (pyperf, one run) in a venv with idforge and its peers, then
# python/bench/report.py: ratios and targets, and the Python section of BENCHMARKS.md.
#
#   python/bench/run.sh [--fast]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
venv="${IDFORGE_BENCH_VENV:-$HOME/.cache/idforge/venv-bench}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps ./python
"$venv/bin/python" -m pip install --quiet pyperf snowflake-id pymongo uuid-utils python-ulid
out="$CARGO_TARGET_DIR/idforge-bench/python.json"
mkdir -p "$(dirname "$out")"
rm -f "$out"
"$venv/bin/python" python/bench/bench_ids.py --quiet ${1:+"$1"} -o "$out"
"$venv/bin/python" python/bench/report.py "$out" --markdown BENCHMARKS.md --command "python/bench/run.sh${1:+ $1}"
