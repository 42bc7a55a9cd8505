"""The build backend (python/build_backend/idforge_build.py): without Rust's cargo on PATH,
building from source stops with one paragraph saying so, not maturin's attempt to download a
toolchain (a long SSL traceback where there is no network for it)."""

import os
import pathlib
import subprocess
import sys

import pytest

BACKEND = pathlib.Path(__file__).resolve().parents[1] / "build_backend"
# The backend is part of the source tree and the sdist, not of the wheel: the tests that run
# against an installed wheel (ci/dist/dist-test.sh copies only python/tests) have no backend to test.
pytestmark = pytest.mark.skipif(
    not BACKEND.is_dir(), reason="no python/build_backend beside these tests (not a source tree)"
)
SAYS = "building idforge from source needs Rust, and `cargo` is not on PATH"
HOOKS = [
    "get_requires_for_build_wheel()",
    "get_requires_for_build_editable()",
    "get_requires_for_build_sdist()",
    "prepare_metadata_for_build_wheel('.')",
    "build_wheel('.')",
    "build_sdist('.')",
]


def without_cargo(tmp_path, **extra):
    """An environment whose PATH is one empty folder: no cargo (and no other tool)."""
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("IDFORGE_BUILD_INSTALL_RUST",)}
    env.update(PATH=str(empty), PYTHONPATH=str(BACKEND), **extra)
    return env


@pytest.mark.parametrize("hook", HOOKS)
def test_every_hook_says_rust_is_needed(tmp_path, hook):
    p = subprocess.run(
        [sys.executable, "-c", f"import idforge_build; idforge_build.{hook}"],
        env=without_cargo(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert SAYS in p.stderr
    assert "Traceback" not in p.stderr
    assert "rustup.rs" in p.stderr and "idforge-VERSION-cp39-abi3" in p.stderr


def test_the_sdist_version_is_named(tmp_path):
    (tmp_path / "PKG-INFO").write_text("Metadata-Version: 2.4\nName: idforge\nVersion: 1.2.3\n")
    p = subprocess.run(
        [sys.executable, "-c", "import idforge_build; idforge_build.build_wheel('.')"],
        env=without_cargo(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1 and "pip install idforge-1.2.3-cp39-abi3-" in p.stderr, p.stderr


def test_with_cargo_the_build_goes_on_to_maturin(tmp_path):
    env = without_cargo(tmp_path)
    cargo = tmp_path / "bin" / "cargo"
    cargo.write_text("#!/bin/sh\nexit 0\n")
    cargo.chmod(0o755)
    p = subprocess.run(
        [sys.executable, "-c", "import idforge_build; idforge_build._require_cargo()"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (p.returncode, p.stderr) == (0, "")


def test_pip_install_of_the_sdist_without_cargo(tmp_path):
    """The whole way a user goes: pip, its isolated build environment (maturin from the package
    index), the sdist ci/test.sh built (IDFORGE_SDIST)."""
    sdist = os.environ.get("IDFORGE_SDIST")
    if not sdist:
        pytest.skip("IDFORGE_SDIST is not set (ci/test.sh's python step sets it)")
    env = without_cargo(tmp_path)
    del env["PYTHONPATH"]
    p = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir",
         "--wheel-dir", str(tmp_path / "out"), sdist],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = p.stdout + p.stderr
    assert p.returncode != 0, output
    assert SAYS in output, output
    assert "Traceback" not in output and "puccinialin" not in output, output
    assert not list(tmp_path.glob("out/*.whl"))
