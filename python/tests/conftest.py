import json
import pathlib

import pytest

TESTDATA = pathlib.Path(__file__).resolve().parents[2] / "core" / "testdata"


def load(name):
    return json.loads((TESTDATA / name).read_text())


@pytest.fixture(scope="session")
def vectors():
    return load


def framework(module):
    """The framework module `module` (sqlalchemy, pydantic, django, psycopg), or a skip when it
    is not installed; with IDFORGE_REQUIRE_FRAMEWORKS set (CI's python step installs them all)
    a missing one fails instead."""
    import importlib
    import os

    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("IDFORGE_REQUIRE_FRAMEWORKS"):
            pytest.fail(f"{module} is not installed but IDFORGE_REQUIRE_FRAMEWORKS is set")
        pytest.skip(f"{module} is not installed (pip install idforge[{module}])", allow_module_level=True)


def required_env(var, who):
    """The value of `var`, which `who` sets in CI, or a skip; with IDFORGE_REQUIRE_SERVICES set a
    missing one fails instead."""
    import os

    value = os.environ.get(var)
    if not value:
        if os.environ.get("IDFORGE_REQUIRE_SERVICES"):
            pytest.fail(f"{var} is not set but IDFORGE_REQUIRE_SERVICES is")
        pytest.skip(f"{var} is not set ({who} sets it)")
    return value


def postgres_url():
    """The test PostgreSQL's URL (ci/services.sh)."""
    return required_env("IDFORGE_TEST_POSTGRES_URL", "ci/services.sh")


def serve_loopback(handle):
    """A listener on 127.0.0.1 that serves each connection with `handle(conn)` on a thread of its
    own (daemon threads; closing the listener stops it). (listener, port)."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener, listener.getsockname()[1]
