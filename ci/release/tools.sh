# shellcheck shell=bash
# The release's Python tools (twine, and pypiserver for ci/release/registries.sh), pinned, in a venv
# of their own under the cache: sourced, it sets RELEASE_VENV.
RELEASE_PIP_TOOLS=("twine==7.0.0" "pypiserver==2.4.2")
RELEASE_VENV="${IDFORGE_CACHE:-$HOME/.cache/idforge}/release-venv"
[ -x "$RELEASE_VENV/bin/python" ] || python3 -m venv "$RELEASE_VENV"
if [ "$(cat "$RELEASE_VENV/idforge-tools" 2>/dev/null)" != "${RELEASE_PIP_TOOLS[*]}" ]; then
  "$RELEASE_VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${RELEASE_PIP_TOOLS[@]}"
  echo "${RELEASE_PIP_TOOLS[*]}" >"$RELEASE_VENV/idforge-tools"
fi
