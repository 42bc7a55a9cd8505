#!/usr/bin/env bash
# The python step: pip install ./python into a venv (maturin builds the pyo3 module), then pytest
# (with pymongo, uuid-utils and python-ulid, for the interop tests, and the frameworks),
# mypy.stubtest on the stubs and mypy --strict on python/typing_check.py; the same wheel's suite on
# the oldest and newest CPython pyenv has; then the maturin sdist in a second venv, its suite with
# the speed tricks off (IDFORGE_PYTHON_SHORTCUTS=0). Debug profile (binding_debug).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# shellcheck source=ci/lib.sh
. ci/lib.sh

binding_debug
venv="${IDFORGE_VENV:-$HOME/.cache/idforge/venv}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# One wheel, built as pip builds it for a user, installed here and in the other CPythons' venvs.
wheel_dir="$(mktemp -d)"
"$venv/bin/python" -m pip wheel --quiet --no-deps -w "$wheel_dir" ./python
"$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$wheel_dir"/idforge-*.whl
# The interop tests check our ids against the peers' own types: pymongo's bson.ObjectId,
# uuid_utils' UUID and python-ulid's ULID.
"$venv/bin/python" -m pip install --quiet "pytest>=7" "pymongo>=4" "uuid-utils>=0.9" "python-ulid>=2" "mypy>=1.18"
# The frameworks of idforge.sqlalchemy, .pydantic and .django, and PostgreSQL's driver: their
# tests must run here (IDFORGE_REQUIRE_FRAMEWORKS), against SQLite and the services' PostgreSQL.
"$venv/bin/python" -m pip install --quiet "sqlalchemy>=2" "pydantic>=2" "django>=4.2" "psycopg[binary]>=3"
# From python/, with the pytest script (not -m): the installed package is tested, not the
# source folder.
(cd python && IDFORGE_REQUIRE_FRAMEWORKS=1 "$venv/bin/pytest" -q)

# The abi3 wheel claims every CPython from 3.9: its uuid.UUID and int shortcuts are checked per
# interpreter when the module loads (bindings/python/src/uuid_object.rs, py_int.rs), so the suite
# also runs on the oldest and the newest CPython that pyenv has here. A machine without them says so.
root="${PYENV_ROOT:-$HOME/.pyenv}"
for v in 3.9 3.13; do
  py="$(ls -d "$root"/versions/"$v".*/bin/python 2>/dev/null | sort -V | tail -1)"
  if [ -z "$py" ]; then
    echo "python: no CPython $v under $root/versions, so the suite did not run on it"
    continue
  fi
  vv="$HOME/.cache/idforge/venv-py$v"
  [ -x "$vv/bin/python" ] || "$py" -m venv "$vv"
  "$vv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$wheel_dir"/idforge-*.whl
  "$vv/bin/python" -m pip install --quiet "pytest>=7" "pymongo>=4" "uuid-utils>=0.9" "python-ulid>=2"
  echo "python: the suite on $("$vv/bin/python" -V)"
  (cd python && "$vv/bin/pytest" -q)
done
rm -rf "$wheel_dir"

# The committed stubs match the native module, and a typed user's view of the API type-checks.
# Run outside python/ so the installed package is what is checked.
(cd "$venv" && bin/python -m mypy.stubtest idforge._idforge &&
  bin/python -m mypy --strict "$OLDPWD/python/typing_check.py")

# The sdist maturin builds installs into a second fresh venv and passes the same tests.
sdist_dir="$(mktemp -d)"
sdist_venv="$sdist_dir/venv"
"$venv/bin/python" -m pip install --quiet "maturin>=1.5,<2"
(cd python && "$venv/bin/maturin" sdist --out "$sdist_dir" >/dev/null)
python3 -m venv "$sdist_venv"
"$sdist_venv/bin/python" -m pip install --quiet "$sdist_dir"/idforge-*.tar.gz "pytest>=7" "pymongo>=4" \
  "uuid-utils>=0.9" "python-ulid>=2"
# IDFORGE_SDIST: pip on that sdist with no cargo on PATH must say Rust is needed, in a paragraph.
# This run has the speed tricks off (IDFORGE_PYTHON_SHORTCUTS=0, bindings/python/src/shortcuts.rs):
# the plain pyo3 paths pass the same suite.
(cd python && IDFORGE_PYTHON_SHORTCUTS=0 IDFORGE_SDIST="$(echo "$sdist_dir"/idforge-*.tar.gz)" \
  "$sdist_venv/bin/pytest" -q)
rm -rf "$sdist_dir"
