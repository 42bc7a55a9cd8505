"""The package's PEP 517 build backend: maturin's, after a check that Rust's ``cargo`` is there.

Building idforge from source (the sdist, or ``pip install ./python``) compiles the Rust engine.
Without ``cargo``, maturin's own backend asks for ``puccinialin`` and tries to download a Rust
toolchain, which on a machine without Rust (often one without that network access either) ends
in a long traceback about SSL or a download, never saying that Rust is what is missing. This
backend stops first, with one paragraph that says what to install, or which prebuilt wheel to
use instead.

``IDFORGE_BUILD_INSTALL_RUST=1`` lets maturin fetch a toolchain as it would by itself.
"""

from __future__ import annotations

import os
import shutil
import sys
from typing import Any, List, Mapping, Optional

MESSAGE = """\
error: building idforge from source needs Rust, and `cargo` is not on PATH.

idforge is a Rust engine with Python bindings: its sdist compiles it. Either
  - install Rust 1.85 or newer (https://rustup.rs, or your system's `cargo` package where it
    is that recent) and run pip again, or
  - install the prebuilt wheel instead (x86_64 Linux with glibc 2.17 or newer, Python 3.9+):
    pip install idforge-{version}-cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl
"""


def _version() -> str:
    # pip runs the hooks in the unpacked sdist, whose PKG-INFO names the version.
    try:
        with open("PKG-INFO", encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "VERSION"


def _require_cargo() -> None:
    if os.environ.get("IDFORGE_BUILD_INSTALL_RUST") == "1":
        return
    if shutil.which("cargo") is None:
        sys.stderr.write(MESSAGE.format(version=_version()))
        sys.stderr.flush()
        raise SystemExit(1)


# Every hook checks first, then hands over to maturin (imported only then, so that the check
# works before maturin is installed).


def get_requires_for_build_wheel(config_settings: Optional[Mapping[str, Any]] = None) -> List[str]:
    _require_cargo()
    import maturin

    return maturin.get_requires_for_build_wheel(config_settings)


def get_requires_for_build_editable(config_settings: Optional[Mapping[str, Any]] = None) -> List[str]:
    _require_cargo()
    import maturin

    return maturin.get_requires_for_build_editable(config_settings)


def get_requires_for_build_sdist(config_settings: Optional[Mapping[str, Any]] = None) -> List[str]:
    _require_cargo()
    import maturin

    return maturin.get_requires_for_build_sdist(config_settings)


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Optional[Mapping[str, Any]] = None
) -> str:
    _require_cargo()
    import maturin

    return maturin.prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: Optional[Mapping[str, Any]] = None
) -> str:
    _require_cargo()
    import maturin

    return maturin.prepare_metadata_for_build_editable(metadata_directory, config_settings)


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    _require_cargo()
    import maturin

    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    _require_cargo()
    import maturin

    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: Optional[Mapping[str, Any]] = None) -> str:
    _require_cargo()
    import maturin

    return maturin.build_sdist(sdist_directory, config_settings)
