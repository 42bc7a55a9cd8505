"""idforge_describe(): any id's fields as jsonb, by the runtime's rules, the same as the
idforge binary's `decode --json` (IDFORGE_BIN) on each kind. Runs after test_extension.py (file
order), which leaves the extension created."""

import json
import os
import subprocess

import pytest

from pgext import SqlError, one


def quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


TEXTS = [
    "1700000000000000000",
    "ffffffff0000000000000000",
    "0190163d-8694-739b-aea5-966c26f8ad91",
    "01J09D7ZPJQ76YP3AVBP8JGFRA",
    "2D7a6d0e1c1a4b5e8f00ab",
]


@pytest.mark.parametrize("text", TEXTS)
def test_fields_are_the_binarys(text):
    got = json.loads(one(f"SELECT idforge_describe({quote(text)})"))
    # ci/steps/pg-extension.sh names the binary.
    out = subprocess.run(
        [os.environ["IDFORGE_BIN"], "decode", text, "--json"], capture_output=True, text=True, check=True
    )
    assert got == json.loads(out.stdout)


def test_type_layout_and_nulls():
    assert json.loads(one("SELECT idforge_describe('123', 'flake128')"))["type"] == "flake128"
    assert json.loads(one("SELECT idforge_describe('1700000000000000000', layout => 'discord')"))["layout"] == "discord"
    assert json.loads(one("SELECT idforge_describe('1700000000000000000', NULL, NULL)"))["layout"] == "twitter"
    assert one("SELECT idforge_describe(NULL) IS NULL") == "t"
    # jsonb operators apply: the time of an ObjectId.
    assert one("SELECT idforge_describe('ffffffff0000000000000000')->>'time'") == "2106-02-07T06:28:15Z"


@pytest.mark.parametrize(
    "call,code",
    [
        ("idforge_describe('nope')", "INVALID_ARGUMENT"),
        ("idforge_describe('12a', 'snowflake')", "INVALID_DECIMAL"),
        ("idforge_describe('1', 'Snowflake')", "INVALID_ARGUMENT"),
        ("idforge_describe('1', NULL, 'no-such-layout')", "INVALID_LAYOUT"),
        ("idforge_describe(repeat('1', 1000000))", "INVALID_DECIMAL"),
    ],
)
def test_bad_input_is_the_typed_error(call, code):
    with pytest.raises(SqlError) as e:
        one(f"SELECT {call}")
    assert code in str(e.value)
