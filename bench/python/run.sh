#!/usr/bin/env bash
# Runs a Python bench in a venv with idforge and its peers, then its report: ratios and targets,
# and its section of BENCHMARKS.md.
#   bench/python/run.sh [--fast]          bench_ids.py (pyperf, one run), bench/report python: "Python"
#   bench/python/run.sh uuid7 [--fast]    bench_uuid7.py (pyperf, one run, then a plain loop
#                                         keeping every id), bench/report python-uuid7: "Python UUIDv7"
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
suite=ids
if [ "${1:-}" = uuid7 ]; then
  suite=uuid7
  shift
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/idforge/target}"
venv="${IDFORGE_BENCH_VENV:-$HOME/.cache/idforge/venv-bench}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps ./python
"$venv/bin/python" -m pip install --quiet pyperf snowflake-id pymongo uuid-utils python-ulid
out="$CARGO_TARGET_DIR/idforge-bench"
mkdir -p "$out"
if [ "$suite" = ids ]; then
  rm -f "$out/python.json"
  "$venv/bin/python" bench/python/bench_ids.py --quiet ${1:+"$1"} -o "$out/python.json"
  "$venv/bin/python" bench/report python "$out/python.json" --markdown BENCHMARKS.md \
    --command "bench/python/run.sh${1:+ $1}"
else
  rm -f "$out/python-uuid7.json" "$out/python-uuid7-loops.json"
  # Away from python/, so the installed package is what runs.
  (cd "$out" && "$venv/bin/python" "$OLDPWD/bench/python/bench_uuid7.py" --quiet ${1:+"$1"} -o python-uuid7.json)
  (cd "$out" && "$venv/bin/python" "$OLDPWD/bench/python/bench_uuid7.py" --loops python-uuid7-loops.json)
  "$venv/bin/python" bench/report python-uuid7 "$out/python-uuid7.json" "$out/python-uuid7-loops.json" \
    --markdown BENCHMARKS.md --command "bench/python/run.sh uuid7${1:+ $1}"
fi
