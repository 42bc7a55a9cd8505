import json
import pathlib

import pytest

TESTDATA = pathlib.Path(__file__).resolve().parents[2] / "core" / "testdata"


def load(name):
    return json.loads((TESTDATA / name).read_text())


@pytest.fixture(scope="session")
def vectors():
    return load
